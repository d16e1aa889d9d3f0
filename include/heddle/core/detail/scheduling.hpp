// The calls through which inlined code hands records to a runtime and waits for them.
// Everything here except the inline fast paths lives in src/core.
#pragma once

#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::detail {

// Queues a ready record from a thread that is not one of `core`'s workers; wakes a worker.
void inject(runtime_core* core, task_base* t);
// The priority lane: every worker looks at it at each task boundary, and a parked one is woken.
void submit_express(runtime_core* core, task_base* t);

runtime_core* default_core();

inline runtime_core* current_core() {
  worker* w = current_worker;
  return w ? w->core : default_core();
}

// Makes a ready record runnable on `core`: on the caller's own deque when it is one of its workers.
inline void schedule(runtime_core* core, task_base* t) {
  worker* w = current_worker;
  if (w && w->core == core) spawn_local(w, t);
  else inject(core, t);
}

void help_until_ready(worker* w, future_state_base* s);
void block_until_ready(future_state_base* s);

// Waits until `s` is complete. On a worker it first runs what is at the bottom of its own deque:
// in fork-join code the awaited task is usually there, and is then run inline with no atomics.
inline void force(future_state_base* s) {
  if (s->is_done()) [[likely]] return;
  worker* w = current_worker;
  if (!w) return block_until_ready(s);
  while (task_base* t = w->deque.pop()) {
    w->stats.executed.bump();
    if (t == s) {
      s->fvt()->run(s);
      s->complete_owned();
      return;
    }
    t->vt->execute(t);
    if (s->is_done()) return;
  }
  help_until_ready(w, s);
}

}  // namespace heddle::detail
