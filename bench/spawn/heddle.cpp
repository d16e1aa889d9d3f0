// SPDX-License-Identifier: Apache-2.0
#include <heddle/heddle.hpp>

#include "fib.hpp"

namespace heddle::bench::spawn {

// The spelling: both children are futures, forced in order (forcing helps while it waits).
long fib_heddle(int n) {
  if (n < 2) return n;
  auto a = heddle::task(fib_heddle, n - 1);
  auto b = heddle::task(fib_heddle, n - 2);
  return *a + *b;
}

// The oneTBB shape (tbb.cpp), on heddle's task_group.
long fib_heddle_group(int n) {
  if (n < 2) return n;
  long x = 0, y = 0;
  heddle::task_group g;
  g.run([&] { x = fib_heddle_group(n - 1); });
  g.run([&] { y = fib_heddle_group(n - 2); });
  g.wait();
  return x + y;
}

}  // namespace heddle::bench::spawn
