// SPDX-License-Identifier: Apache-2.0
// A known active-message program for the trace tests (trace_test.sh): node 0 calls `where_am_i` on
// every other node N times (sync) and posts N `bump`s to each, then waits until each has counted
// them; the others serve. Prints "ok" on node 0.
#include <heddle/am.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

namespace off = heddle::offload;

off::node_id where_am_i() { return off::this_node(); }
std::atomic<int> bumped{0};
void bump() { bumped.fetch_add(1); }
int counted() { return bumped.load(); }

}  // namespace

int main(int argc, char** argv) {
  try {
    off::session s(argc, argv);
    if (off::this_node() != 0) return s.serve();
    const int n = argc > 1 ? std::atoi(argv[1]) : 10;
    for (off::node_id to = 1; to < off::num_nodes(); ++to) {
      for (int i = 0; i < n; ++i)
        if (off::sync(to, heddle::f2f<&where_am_i>()) != to) return 1;
      for (int i = 0; i < n; ++i) off::ping(to, heddle::f2f<&bump>());
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (off::sync(to, heddle::f2f<&counted>()) != n)
        if (std::chrono::steady_clock::now() > deadline) return 1;
        else std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::puts("ok");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "am_trace_program: %s\n", e.what());
    return 2;
  }
}
