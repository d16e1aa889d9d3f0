// SPDX-License-Identifier: Apache-2.0
// One run of the blocking workload in each runtime, one file each: heddle.cpp, tbb.cpp. Each makes
// its runtime (heddle::runtime, tbb::task_arena, the peer's timer thread) outside the timed region,
// fresh for every run, and returns the wall time in seconds from submitting the first task to the
// end of the last chain.
#pragma once

#include <heddle/core/stats.hpp>
#include <heddle/core/strategy.hpp>

#include "workload.hpp"

namespace heddle::bench::blocking {

// How a light task waits for its start time.
enum class heddle_mode {
  noblock,   // it does not: the successor is spawned at once (the baseline)
  blocking,  // a heddle task that std::this_thread::sleep_until's the start time, holding its worker
  timer,     // heddle::sleep_until(rt, start).then(strategy, light task): no thread held
};
enum class tbb_mode {
  noblock,       // the successor is spawned at once (oneTBB's baseline)
  blocking,      // a task_group task that sleeps until the start time
  async_node,    // flow graph: an async_node hands its gateway to the timer thread, which try_puts
  suspend,       // resumable tasks: tbb::task::suspend, the timer thread calls tbb::task::resume
  heddle_timer,  // heddle's timer engine, the successor enqueued into the arena (heddle::then_in_arena)
};

struct heddle_outcome {
  double seconds = 0;
  heddle::latency_summary engine{};    // rt.stats().latency(how) of the run (heddle_mode::timer)
  heddle::latency_summary lateness{};  // rt.stats().timer_lateness: deadline to the timer's completion
};

// `timeout`: longest wait for the chains before the run is declared hung (std::runtime_error).
heddle_outcome run_heddle(const params& p, run_record& r, heddle_mode mode, heddle::strategy how,
                          clock::duration timeout);
double run_tbb(const params& p, run_record& r, tbb_mode mode);

}  // namespace heddle::bench::blocking
