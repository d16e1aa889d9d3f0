// SPDX-License-Identifier: Apache-2.0
// Many coroutines suspended at once on timers: what each costs in memory beyond its own frame, and
// how fast the runtime resumes them all when their common deadline passes.
#pragma once

#include <heddle/heddle.hpp>

namespace heddle::bench::spawn {

struct suspended_figures {
  double frame_bytes = 0;         // per coroutine made and never started: its frame (and 8 bytes for its co_task)
  double suspended_bytes = 0;     // per coroutine spawned and suspended on its timer (and 8 for its future)
  double beyond_frame_bytes = 0;  // the difference: what spawning and suspending adds to the frame
  double completions_per_s = 0;   // from the deadline to the last coroutine's end
};

// Measures `n` coroutines on `rt` (resident memory, /proc/self/statm, before and after each step).
// Throws std::runtime_error if a coroutine's result is wrong.
suspended_figures measure_suspended(heddle::runtime& rt, int n);

}  // namespace heddle::bench::spawn
