// The calls through which inlined code hands records to a runtime and waits for them.
// Everything here except the inline fast paths lives in src/core.
#pragma once

#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::core_detail {

// Queues a ready record from a thread that is not one of `core`'s workers; wakes a worker.
HEDDLE_EXPORT void inject(runtime_core* core, task_base* t);
// The priority lane: every worker looks at it at each task boundary, and a parked one is woken.
HEDDLE_EXPORT void submit_express(runtime_core* core, task_base* t);

HEDDLE_EXPORT runtime_core* default_core();

// True unless the calling thread is one of `core`'s workers and no other work waits anywhere in
// the runtime (express lane, injection queue, any deque) while it is running: a long-running
// owner of a shared resource (a serial queue's drain) then need not yield its worker.
HEDDLE_EXPORT bool work_waiting(runtime_core* core) noexcept;

// Set while a thread that is not a worker runs a successor for a runtime (a service thread under
// strategy::short_task, an auxiliary thread under strategy::asap): the tasks and continuations it
// creates belong to that runtime and go out on its express lane.
HEDDLE_FAST_TLS(runtime_core*, lending_core);  // src/core/runtime_core.cpp

inline runtime_core* current_core() {
  worker* w = current_worker;
  if (w) return w->core;
  if (runtime_core* c = lending_core) return c;
  return default_core();
}

// Makes a ready record runnable on `core`: on the caller's own deque when it is one of its workers.
inline void schedule(runtime_core* core, task_base* t) {
  worker* w = current_worker;
  if (w && w->core == core) spawn_local(w, t);
  else if (core == lending_core) submit_express(core, t);
  else inject(core, t);
}

// Starts a successor whose strategy is not `normal` (src/core/successors.cpp).
HEDDLE_EXPORT void start_successor(runtime_core* core, task_base* t, strategy how) noexcept;
// Records a successor's completion-to-start latency; `ready_ns` is steady_clock's count at completion.
HEDDLE_EXPORT void record_successor_latency(runtime_core* core, strategy how, std::int64_t ready_ns) noexcept;

HEDDLE_EXPORT void help_until_ready(worker* w, future_state_base* s);
HEDDLE_EXPORT void block_until_ready(future_state_base* s);

// Waits until `s` is complete. On a worker it first runs what is at the bottom of its own deque:
// in fork-join code the awaited task is usually there, and is then run inline with no atomics.
inline void force(future_state_base* s) {
  if (s->is_done()) [[likely]] return;
  worker* w = current_worker;
  if (!w) return block_until_ready(s);
  // A future that is no task's (a promise, an operation) is not on this deque: wait by the policy
  // that bounds how deep unrelated work nests (src/core/waiting.cpp).
  if (!s->fvt()->run) return help_until_ready(w, s);
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

}  // namespace heddle::core_detail
