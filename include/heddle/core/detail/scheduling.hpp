// SPDX-License-Identifier: Apache-2.0
// The calls through which inlined code hands records to a runtime and waits for them.
// Everything here except the inline fast paths lives in src/core.
#pragma once

#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/trace.hpp"
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

// Set while a thread that is not one of its workers runs inside runtime::execute: the calls that
// pick the current runtime (heddle::task, task_group(), the algorithms, the async layer's calls)
// then use it. Submissions from there are injected, as any outsider's.
HEDDLE_FAST_TLS(runtime_core*, entered_core);  // src/core/runtime_core.cpp

// The isolation region (heddle::isolate) of a thread that is not acting as a worker; a worker's is
// worker::isolation. Records this thread injects take it.
HEDDLE_FAST_TLS(std::uint32_t, outside_isolation);  // src/core/runtime_core.cpp

inline runtime_core* current_core() {
  worker* w = current_worker;
  if (w) return w->core;
  if (runtime_core* c = lending_core) return c;
  if (runtime_core* c = entered_core) return c;
  return default_core();
}

// The calling thread's isolation region, 0 outside any.
inline std::uint32_t current_isolation() noexcept {
  if (worker* w = current_worker) return w->isolation.load(std::memory_order_relaxed);
  return outside_isolation;
}

// runtime::execute from a thread that is not one of `core`'s workers. For the scope the thread acts
// as no worker (a worker of another runtime included: what it spawns must go to `core`, not to its
// own deque), lends to no runtime, and has `core` as its current runtime; it keeps its isolation
// region. Everything is restored on exit, an exception's included.
class entered_scope {
 public:
  explicit entered_scope(runtime_core* core) noexcept
      : worker_(current_worker), lending_(lending_core), entered_(entered_core), isolation_(outside_isolation) {
    outside_isolation = current_isolation();
    current_worker = nullptr;
    lending_core = nullptr;
    entered_core = core;
  }
  ~entered_scope() {
    current_worker = worker_;
    lending_core = lending_;
    entered_core = entered_;
    outside_isolation = isolation_;
  }
  entered_scope(const entered_scope&) = delete;
  entered_scope& operator=(const entered_scope&) = delete;

 private:
  worker* worker_;
  runtime_core* lending_;
  runtime_core* entered_;
  std::uint32_t isolation_;
};

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
// force() popped `t`, of another isolation region than the worker's: puts it back and helps.
HEDDLE_EXPORT void help_after_mismatch(worker* w, future_state_base* s, task_base* t);
HEDDLE_EXPORT void block_until_ready(future_state_base* s);

// Runs `t`, a task other than `s` that w popped from its own deque while waiting for `s` (force(),
// forked::take_back). A task of w's isolation region runs here, with nothing to switch: w is in its
// region already. Any other goes back, and w helps until `s` is ready under the helping policy (an
// isolated waiter leaves it; an unisolated one runs it with its region set): `s` is then done.
inline void run_popped(worker* w, future_state_base* s, task_base* t) {
  if (t->isolation != w->isolation.load(std::memory_order_relaxed)) [[unlikely]]
    return help_after_mismatch(w, s, t);
  w->stats.executed.bump();
  if (trace::on()) [[unlikely]]
    return trace::run_traced(t, t->vt->execute, trace::how::nested);
  t->vt->execute(t);
}

// force()'s work on a worker, for a future that is a task's: the awaited task itself runs inline in
// the caller's isolation, any other popped task by run_popped's rule. Traced, the awaited task's run
// is recorded: force() decides once, on entry, where fewer values are live than in the loop (a
// check inside it cost a register spill per task: measured, heddle-bench spawn).
template <bool Traced>
void force_on_worker(worker* w, future_state_base* s) {
  while (task_base* t = w->deque.pop()) {
    if (t == s) {
      w->stats.executed.bump();
      if constexpr (Traced) trace::run_and_record(s, s->fvt()->run, trace::how::inline_run);
      else s->fvt()->run(s);
      s->complete_owned();
      return;
    }
    run_popped(w, s, t);
    if (s->is_done()) return;
  }
  help_until_ready(w, s);
}
// Out of line: force_on_worker<true> (src/core/waiting.cpp).
HEDDLE_EXPORT void force_traced(worker* w, future_state_base* s);

// Waits until `s` is complete. On a worker it first runs what is at the bottom of its own deque:
// in fork-join code the awaited task is usually there, and is then run inline with no atomics.
inline void force(future_state_base* s) {
  if (s->is_done()) [[likely]]
    return;
  worker* w = current_worker;
  if (!w) return block_until_ready(s);
  // A future that is no task's (a promise, an operation) is not on this deque: wait by the policy
  // that bounds how deep unrelated work nests (src/core/waiting.cpp).
  if (!s->fvt()->run) return help_until_ready(w, s);
  if (trace::on()) [[unlikely]]
    return force_traced(w, s);
  force_on_worker<false>(w, s);
}

}  // namespace heddle::core_detail
