// SPDX-License-Identifier: Apache-2.0
// Deadlines (heddle/async/detail/deadline.hpp): a periodic timer's next step, and tasks scheduled at
// a deadline, for the dispatch layer's delayed items and sources and the framework's done_at.
#include "heddle/async/detail/deadline.hpp"

#include <exception>

#include "heddle/async/timer.hpp"
#include "heddle/core/detail/completion_hook.hpp"
#include "heddle/core/detail/scheduling.hpp"

namespace heddle::async_detail {

period_step next_deadline(std::chrono::steady_clock::time_point due, std::chrono::nanoseconds period,
                          std::chrono::steady_clock::time_point now) noexcept {
  using clock = std::chrono::steady_clock;
  const std::uint64_t passed = 1 + static_cast<std::uint64_t>((now - due) / period);
  const auto room = clock::time_point::max() - due;  // the next deadline saturates at "never"
  const clock::time_point next = period > room / static_cast<std::int64_t>(passed)
                                     ? clock::time_point::max()
                                     : due + static_cast<std::int64_t>(passed) * period;
  return {passed, next};
}

namespace {
// The timer's completion schedules the task, or discards it if the timer failed (the runtime
// stopped before the deadline).
struct delayed_task final : core_detail::completion_hook {
  delayed_task(core_detail::runtime_core* c, core_detail::task_base* t) noexcept
      : completion_hook(&fire), core(c), task(t) {}
  core_detail::runtime_core* core;
  core_detail::task_base* task;

  static void fire(completion_hook* h, std::exception_ptr error) noexcept {
    auto* self = static_cast<delayed_task*>(h);
    core_detail::runtime_core* core = self->core;
    core_detail::task_base* t = self->task;
    core_detail::free_record(self);
    if (error) t->vt->discard(t);
    else core_detail::schedule(core, t);
  }
};
}  // namespace

void schedule_at(core_detail::runtime_core* core, std::chrono::steady_clock::time_point deadline,
                 core_detail::task_base* t) {
  delayed_task* d = nullptr;
  try {
    d = core_detail::make_record<delayed_task>(core, t);
    d->hook(start_timer(core, deadline, {}));
  } catch (...) {
    if (d) core_detail::free_record(d);
    t->vt->discard(t);
    throw;
  }
}

}  // namespace heddle::async_detail
