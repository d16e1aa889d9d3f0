// SPDX-License-Identifier: Apache-2.0
// Tasks as futures: each call spawns its two children and forces them.
// Forcing a future on a worker runs other tasks until the value is there.
#include <heddle/heddle.hpp>

#include <cstdio>
#include <cstdlib>

long fib(int n) {
  if (n < 2) return n;
  heddle::future<long> a = heddle::task(fib, n - 1);
  heddle::future<long> b = heddle::task(fib, n - 2);
  return *a + *b;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 30;
  heddle::future<long> r = heddle::task(fib, n);  // runs on the default runtime
  std::printf("fib(%d) = %ld\n", n, *r);
  const heddle::runtime_stats s = heddle::default_runtime().stats();
  std::printf("%llu tasks on %u workers, %llu stolen\n", static_cast<unsigned long long>(s.executed), s.workers,
              static_cast<unsigned long long>(s.steals));
}
