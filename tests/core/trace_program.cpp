// SPDX-License-Identifier: Apache-2.0
// A known program for the trace tests that start it with HEDDLE_TRACE=FILE: fib(N) on the default
// runtime, every task named "fib". Prints the result.
#include <cstdio>
#include <cstdlib>
#include <heddle/core/trace.hpp>
#include <heddle/heddle.hpp>

namespace {
long fib(int n) {
  if (n < 2) return n;
  auto a = heddle::task(heddle::named("fib", fib), n - 1);
  const long b = fib(n - 2);
  return *a + b;
}
}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20;
  std::printf("%ld\n", heddle::default_runtime().execute([n] { return fib(n); }));
}
