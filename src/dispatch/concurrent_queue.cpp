// concurrent_queue's delayed tasks: a timer whose completion schedules the task.
#include "heddle/dispatch/concurrent_queue.hpp"

#include "heddle/dispatch/detail/completion_hook.hpp"

namespace heddle::dispatch_detail {

namespace {
struct delayed_task final : completion_hook {
  delayed_task(core_detail::runtime_core* c, core_detail::task_base* t) noexcept
      : completion_hook(&fire), core(c), task(t) {}
  core_detail::runtime_core* core;
  core_detail::task_base* task;

  static void fire(completion_hook* h, std::exception_ptr error) noexcept {
    auto* self = static_cast<delayed_task*>(h);
    core_detail::runtime_core* core = self->core;
    core_detail::task_base* t = self->task;
    core_detail::free_record(self);
    if (error) t->vt->discard(t);  // the runtime stopped before the deadline
    else core_detail::schedule(core, t);
  }
};
}  // namespace

void schedule_at(core_detail::runtime_core* core, std::chrono::steady_clock::time_point deadline,
                 core_detail::task_base* t) {
  delayed_task* d = nullptr;
  try {
    d = core_detail::make_record<delayed_task>(core, t);
    d->hook(async_detail::start_timer(core, deadline, {}));
  } catch (...) {
    if (d) core_detail::free_record(d);
    t->vt->discard(t);
    throw;
  }
}

}  // namespace heddle::dispatch_detail
