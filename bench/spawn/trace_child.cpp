// SPDX-License-Identifier: Apache-2.0
// heddle-spawn-child: fib(n) with futures and with task groups on a fresh runtime, timed, for the
// spawn suite's trace_off_vs_compiled_out. Built twice from the same sources against two static
// copies of the core that differ only in HEDDLE_TRACE_COMPILED (CMakeLists.txt): the suite runs
// both, alternately, and forms their ratio round by round.
//
//   heddle-spawn-child N THREADS REPS   prints {"futures":[s...],"group":[s...],"trace_compiled":0|1}
#include <heddle/core/trace.hpp>
#include <heddle/heddle.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fib.hpp"

namespace {

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace heddle::bench::spawn;
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s N THREADS REPS\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const unsigned threads = static_cast<unsigned>(std::atoi(argv[2]));
  const int reps = std::atoi(argv[3]);
  if (n < 2 || n > 40 || threads < 1 || reps < 1) {
    std::fprintf(stderr, "%s: N from 2 to 40, THREADS and REPS at least 1\n", argv[0]);
    return 2;
  }
  heddle::runtime rt({.threads = threads});
  const long expected = fib_value(n);
  std::string futures, group;
  for (int r = -1; r < reps; ++r) {  // the first round warms up and is not reported
    long a = 0, b = 0;
    const double sa = seconds([&] { a = *rt.task(fib_heddle, n); });
    const double sb = seconds([&] { b = *rt.task(fib_heddle_group, n); });
    if (a != expected || b != expected) {
      std::fprintf(stderr, "%s: fib(%d) gave %ld and %ld, not %ld\n", argv[0], n, a, b, expected);
      return 1;
    }
    if (r < 0) continue;
    futures += (futures.empty() ? "" : ",") + std::to_string(sa);
    group += (group.empty() ? "" : ",") + std::to_string(sb);
  }
  std::printf("{\"futures\":[%s],\"group\":[%s],\"trace_compiled\":%d}\n", futures.c_str(), group.c_str(),
              heddle::trace::compiled_in() ? 1 : 0);
}
