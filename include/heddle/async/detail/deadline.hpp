// SPDX-License-Identifier: Apache-2.0
// Deadlines, for the layers that wait on the timer engine: computing one from a delay or a period,
// and running a task once one has passed. All on std::chrono::steady_clock, saturated: a deadline
// past the clock's range is time_point::max(), "never".
#pragma once

#include <chrono>
#include <cstdint>

#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"

namespace heddle::async_detail {

// now + d, saturated: a duration past the clock's range (hours::max()) means "never"; a duration
// of zero or less means now.
template <class Rep, class Period>
std::chrono::steady_clock::time_point deadline_after(std::chrono::duration<Rep, Period> d) {
  using clock = std::chrono::steady_clock;
  const clock::time_point now = clock::now();
  if (d <= d.zero()) return now;
  using wide = std::chrono::duration<long double>;
  if (wide(d) >= wide(clock::time_point::max() - now)) return clock::time_point::max();
  return now + std::chrono::ceil<clock::duration>(d);
}

// A periodic timer's step, once its deadline `due` has passed at `now` (now >= due): how many
// deadlines have passed (at least one; more if the timer engine ran late), and the next one, the
// first after `now` on the grid due + k * period (saturated). `period` must be positive.
struct period_step {
  std::uint64_t passed;
  std::chrono::steady_clock::time_point next;
};
HEDDLE_EXPORT period_step next_deadline(std::chrono::steady_clock::time_point due, std::chrono::nanoseconds period,
                                        std::chrono::steady_clock::time_point now) noexcept;

// Schedules `t` on `core` once `deadline` has passed, through the timer engine (no thread waits);
// discards it (its vtable's discard) if the runtime stops first. On failure (the runtime is
// already stopping: task_cancelled) discards `t` and throws.
HEDDLE_EXPORT void schedule_at(core_detail::runtime_core* core, std::chrono::steady_clock::time_point deadline,
                               core_detail::task_base* t);

}  // namespace heddle::async_detail
