// SPDX-License-Identifier: Apache-2.0
// heddle-bench-am-calls: the instructions of one small offload, for callgrind. Node 0 makes N empty
// short_task calls to node 1 and waits for each (offload::sync; with `broadcast`, N broadcasts of a
// function returning the node's number, each waited for with get()), between a "measure" call that
// zeroes node 1's counters and a "done" call that dumps them, so that both sides' profiles hold the
// N calls and not the session's start and end. bench/am/callgrind_calls.sh runs it under callgrind
// and prints the instructions per call of each side's functions.
//   heddle-run -n 2 --backend shm valgrind --tool=callgrind heddle-bench-am-calls N [express|default|int|broadcast]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <heddle/am.hpp>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else  // counted without valgrind's client requests: the whole run's profile
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)
#endif

namespace {

namespace off = heddle::offload;

void empty() {}
int add_one(int v) { return v + 1; }
off::node_id here() { return off::this_node(); }
void measure() { CALLGRIND_ZERO_STATS; }
void done() { CALLGRIND_DUMP_STATS_AT("calls"); }

// One call and its wait, apart: the profile's per-call figure starts here (callgrind_calls.sh).
[[gnu::noinline]] long one_call(long i, bool with_int, heddle::strategy how) {
  if (with_int) return off::sync(1, heddle::f2f<&add_one>(static_cast<int>(i)), how);
  off::sync(1, heddle::f2f<&empty>(), how);
  return 0;
}
// One broadcast and its wait, apart in the same way (a function of its own: the calls' figure
// counts no test for it); 0 when every other node answered, in node order.
[[gnu::noinline]] long one_broadcast(heddle::strategy how) {
  const std::vector<off::node_id> v = off::broadcast(heddle::f2f<&here>(), how).get();
  long wrong = static_cast<long>(v.size()) - (off::num_nodes() - 1);
  for (std::size_t k = 0; k < v.size(); ++k) wrong += v[k] != k + 1;
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    off::session s(argc, argv);
    if (off::this_node() != 0) return s.serve();
    const long n = argc > 1 ? std::atol(argv[1]) : 10000;
    const bool express = argc > 2 && std::strcmp(argv[2], "express") == 0;
    const bool with_int = argc > 2 && std::strcmp(argv[2], "int") == 0;
    const bool broadcast = argc > 2 && std::strcmp(argv[2], "broadcast") == 0;
    // `default`: the calls made with no strategy (the default rule) travel as am_detail::by_rule.
    const bool by_rule = argc > 2 && std::strcmp(argv[2], "default") == 0;
    const heddle::strategy how = express   ? heddle::strategy::express
                                 : by_rule ? heddle::am_detail::by_rule
                                           : heddle::strategy::short_task;
    for (int i = 0; i < 1000; ++i) off::sync(1, heddle::f2f<&empty>(), how);  // warm: caches, code, records
    off::sync(1, heddle::f2f<&measure>(), heddle::strategy::short_task);
    CALLGRIND_ZERO_STATS;
    long sum = 0;
    const auto t0 = std::chrono::steady_clock::now();
    if (broadcast)
      for (long i = 0; i < n; ++i) sum += one_broadcast(how);
    else
      for (long i = 0; i < n; ++i) sum += one_call(i, with_int, how);
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - t0;
    CALLGRIND_DUMP_STATS_AT("calls");
    off::sync(1, heddle::f2f<&done>(), heddle::strategy::short_task);
    if ((with_int && sum != n * (n + 1) / 2) || (broadcast && sum != 0)) {
      std::fprintf(stderr, "heddle-bench-am-calls: wrong results (sum %ld)\n", sum);
      return 1;
    }
    std::printf("%ld calls, %.0f ns per call\n", n, took.count() / static_cast<double>(n));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench-am-calls: %s\n", e.what());
    return 1;
  }
}
