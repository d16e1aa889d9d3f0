// SPDX-License-Identifier: Apache-2.0
// Time as the runtime's statistics measure it, for every layer that stamps or compares times:
// std::chrono::steady_clock, in nanoseconds since its epoch. And the one statistic the core keeps
// for a layer above: how late the timer engine completes timers (runtime_stats::timer_lateness).
#pragma once

#include <chrono>
#include <cstdint>

#include "heddle/core/export.hpp"

namespace heddle::core_detail {

class runtime_core;

// `t` in steady-clock nanoseconds.
inline std::int64_t steady_ns(std::chrono::steady_clock::time_point t) noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
// Now, in steady-clock nanoseconds.
inline std::int64_t steady_now_ns() noexcept { return steady_ns(std::chrono::steady_clock::now()); }

// Records that a timer due at `deadline_ns` completed at `completed_ns` (both steady_ns): its
// lateness, completed - deadline, counted as zero if the completion came first. Thread-safe.
HEDDLE_EXPORT void record_timer_lateness(runtime_core* core, std::int64_t deadline_ns,
                                         std::int64_t completed_ns) noexcept;

}  // namespace heddle::core_detail
