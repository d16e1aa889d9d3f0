// SPDX-License-Identifier: Apache-2.0
// fib(n) with a task per call — both children spawned — in each runtime, and the plain recursion.
// One file per runtime, side by side: heddle.cpp, tbb.cpp, serial.cpp; suite.cpp times them; the
// coroutine forms (co_fib.cpp) are timed against heddle's futures and oneTBB by coroutines.cpp.
#pragma once

#include <heddle/core/co_task.hpp>

namespace heddle::bench::spawn {

long fib_heddle(int n);                      // futures: a = heddle::task(fib, n-1); b = heddle::task(fib, n-2); *a + *b
long fib_heddle_group(int n);                // heddle::task_group, the same shape as the oneTBB version
long fib_tbb(int n);                         // tbb::task_group: g.run both children, g.wait()
long fib_serial(int n);                      // the same recursion without tasks, both calls kept (serial.cpp)
heddle::co_task<long> co_fib(int n);         // coroutines: both children spawned, both awaited (co_fib.cpp)
heddle::co_task<long> co_fib_inline(int n);  // one child spawned, the other awaited in place

// fib(n) by iteration, to check the others against.
constexpr long fib_value(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const long next = a + b;
    a = b;
    b = next;
  }
  return a;
}

// Tasks spawned by fib(n) when every call but the root is a task: calls − 1 = 2·fib(n+1) − 2.
constexpr long fib_tasks(int n) { return 2 * fib_value(n + 1) - 2; }

}  // namespace heddle::bench::spawn
