// SPDX-License-Identifier: Apache-2.0
// Scheduler counters and successor latencies, summed over the workers of one runtime.
#pragma once

#include <array>
#include <cstdint>

#include "heddle/core/export.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle {

// Completion-to-start latency of successors started with one strategy. Percentiles come from a
// log-linear histogram (exact below 16 ns, then 8 buckets per power of two) and are within 6.25 % of
// the sample they stand for: a bucket's midpoint is at most half a bucket width, 1/16 of the
// bucket's lower bound, from any value in it (tests/core/latency_histogram_test.cpp).
struct latency_summary {
  std::uint64_t count = 0;
  double mean_ns = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t max_ns = 0;
};

struct runtime_stats {
  unsigned workers = 0;
  std::uint64_t spawned = 0;  // tasks pushed by workers onto their own deques
  // Tasks put on the injection queue: submitted from threads outside the runtime, and those that
  // isolated waiters requeued (counted in isolation_requeues too).
  std::uint64_t injected = 0;
  std::uint64_t express = 0;        // tasks submitted on the express lane
  std::uint64_t executed = 0;       // tasks run to completion by workers
  std::uint64_t steals = 0;         // tasks taken from another worker's deque
  std::uint64_t failed_steals = 0;  // steal attempts that found nothing or lost a race
  std::uint64_t parks = 0;          // times a worker went to sleep in the kernel
  std::uint64_t wakeups = 0;        // times a worker woke up another one
  // Idle sleeps that timed out with work waiting and no wake-up sent to anybody meanwhile: wake-ups
  // the scheduler missed, found only by the sleeper's timeout. Zero unless the kernel lacks
  // membarrier or HEDDLE_PARKING=timed is set (docs/core.md, "Sleeping and waking").
  std::uint64_t lost_wakeups = 0;
  std::uint64_t asap_by_pool = 0;     // asap successors that the auxiliary pool won
  std::uint64_t asap_by_workers = 0;  // asap successors that a worker won
  // Tasks that a waiter inside heddle::isolate stole and found to belong to another isolation
  // region: it cannot run them, so they went back to the runtime's injection queue (and count in
  // `injected` too).
  std::uint64_t isolation_requeues = 0;

  // Successors started by future.then(strategy, f), indexed by strategy, and plain then(f)
  // successors of sources completed outside the workers (under default_strategy). Plain then(f)
  // successors of tasks are not measured.
  std::array<latency_summary, strategy_count> successor_latency{};
  const latency_summary& latency(strategy s) const noexcept { return successor_latency[static_cast<std::size_t>(s)]; }

  // Timers: from the deadline to the completion by the timer engine (how late the engine's thread
  // ran). A successor's own latency (above) starts at that completion.
  latency_summary timer_lateness{};
};

// The stats of the calling worker's runtime, or of the default runtime from any other thread.
HEDDLE_EXPORT runtime_stats stats();

}  // namespace heddle
