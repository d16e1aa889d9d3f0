// SPDX-License-Identifier: Apache-2.0
#include <tbb/task_group.h>

#include "fib.hpp"

namespace heddle::bench::spawn {

long fib_tbb(int n) {
  if (n < 2) return n;
  long x = 0, y = 0;
  tbb::task_group g;
  g.run([&] { x = fib_tbb(n - 1); });
  g.run([&] { y = fib_tbb(n - 2); });
  g.wait();
  return x + y;
}

}  // namespace heddle::bench::spawn
