// concurrent_queue's delayed tasks: a timer whose completion schedules the task.
#include "heddle/dispatch/concurrent_queue.hpp"

#include "heddle/dispatch/detail/completion_hook.hpp"

namespace heddle::detail {

namespace {
struct delayed_task final : completion_hook {
  delayed_task(runtime_core* c, task_base* t) noexcept : completion_hook(&fire), core(c), task(t) {}
  runtime_core* core;
  task_base* task;

  static void fire(completion_hook* h, std::exception_ptr error) noexcept {
    auto* self = static_cast<delayed_task*>(h);
    runtime_core* core = self->core;
    task_base* t = self->task;
    free_record(self);
    if (error) t->vt->discard(t);  // the runtime stopped before the deadline
    else schedule(core, t);
  }
};
}  // namespace

void schedule_at(runtime_core* core, std::chrono::steady_clock::time_point deadline, task_base* t) {
  delayed_task* d = nullptr;
  try {
    d = make_record<delayed_task>(core, t);
    d->hook(start_timer(core, deadline, {}));
  } catch (...) {
    if (d) free_record(d);
    t->vt->discard(t);
    throw;
  }
}

}  // namespace heddle::detail
