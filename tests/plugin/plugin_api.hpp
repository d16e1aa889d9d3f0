// SPDX-License-Identifier: Apache-2.0
// What the test plugin (plugin_module.cpp) offers its hosts, by C names that dlsym() finds.
#pragma once

#include <cstdint>

namespace heddle {
class runtime;
}

extern "C" {

// What one run of the plugin's work found; the host checks every field.
struct plugin_report {
  std::uint64_t fib;               // fib(n) computed by nested tasks and futures
  std::uint64_t tasks;             // how many tasks the fib spawned
  std::uint64_t queue_items;       // items run by the serial queue
  std::uint64_t queue_misordered;  // items that ran out of their enqueue order
  std::uint64_t queue_overlaps;    // items that ran while another item of the queue was running
  std::uint64_t outside_worker;    // fib tasks that found no calling worker (must be 0)
  std::uint64_t fib_spawned;       // runtime_stats::spawned during the fib: onto workers' own deques
  std::uint64_t fib_injected;      // runtime_stats::injected during the fib: from outside (the root)
  std::uint64_t met_workers;       // distinct threads in the rendezvous of rendezvous_tasks tasks
};

// Tasks that wait for one another: they meet only if that many workers run them at once.
constexpr unsigned rendezvous_tasks = 3;

// Runs the work on `rt` from inside one of its tasks, waits for all of it, fills *out.
using plugin_run_fn = void (*)(heddle::runtime& rt, unsigned n, plugin_report* out);
// The same on a runtime of `workers` threads that the plugin makes and destroys itself: for hosts
// that do not link heddle (its libraries come in with the plugin).
using plugin_run_own_fn = void (*)(unsigned workers, unsigned n, plugin_report* out);
}
