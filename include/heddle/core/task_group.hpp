// SPDX-License-Identifier: Apache-2.0
// heddle::task_group: run a set of tasks, wait for all of them, get the first exception.
//
// Thread safety: run(), cancel(), is_cancelling() and token() are thread-safe, from any thread, the
// group's own tasks included; one thread at a time waits (wait(), wait_async() or the destructor),
// and never one of the group's own tasks, which would wait for itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "heddle/core/cancellation.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

enum class task_group_status { complete, cancelled };

class task_group;

namespace core_detail {
HEDDLE_EXPORT void group_wait(task_group& g);
// Whether the calling thread is one of the workers of g's runtime: the algorithms then run the root
// of their task tree here rather than send it there (heddle/algorithm/detail/run.hpp).
HEDDLE_EXPORT bool runs_on_caller(const task_group& g) noexcept;
template <class F>
class group_task;
class group_wait_state;
}  // namespace core_detail

class HEDDLE_EXPORT task_group {
 public:
  // Runs its tasks on the calling worker's runtime, or on the default runtime (which may throw
  // configuration_error when it has to start and HEDDLE_NUM_THREADS is bad). Thread-safe.
  task_group() : core_(core_detail::current_core()) {}
  explicit task_group(runtime& rt) noexcept : core_(core_detail::access::core_of(rt)) {}
  // Waits for the tasks still running; an exception that no wait() collected is dropped. Not
  // thread-safe: the owner's call, once nobody else runs tasks in the group; blocks as wait() does.
  ~task_group();
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;

  // Runs f() as a task of this group. Once the group is cancelled, tasks not yet started are skipped.
  // Thread-safe; never waits: any thread, the group's own tasks included.
  template <class F>
  void run(F&& f);

  // Waits until every task of the group has finished, helping on a worker and sleeping elsewhere.
  // Rethrows the first exception a task threw (which also cancelled the group; task_cancelled for
  // tasks a stopping runtime discarded); else returns cancelled if cancel() was called since the
  // last wait(), complete otherwise. The group can be reused afterwards: its cancellation and error
  // are reset. Not thread-safe: one waiting thread at a time (while run() and cancel() may go on
  // from others), never one of the group's own tasks; blocks: a worker runs other tasks meanwhile,
  // another thread sleeps.
  task_group_status wait();

  // wait() without blocking: the future completes once every task of the group has finished (the
  // moment the count of unfinished tasks first reaches zero), with wait()'s status or failed with
  // the first exception a task threw, and the group reset as wait() leaves it. Whoever awaits the
  // future holds no thread meanwhile: `co_await g.wait_async()` in a coroutine, `then`, when_all.
  // The future belongs to the group's runtime (its successors run there) and is ready at once when
  // no task is unfinished. Costs one record (a block) and, once armed, the last task's finisher
  // calls the future's successor. Tasks may still be run meanwhile. One wait_async at a time: a
  // second while one is pending throws std::logic_error. The group's destructor, or
  // a wait(), while a wait_async is pending waits for the tasks and until the pending wait has taken
  // the group's status and error (its future completes right after), helping on a worker and
  // spinning elsewhere (nothing wakes such a waiter); that wait() then returns complete. Throws
  // std::bad_alloc if the record cannot be had. Not thread-safe against another wait: one thread
  // at a time waits (run() and cancel() may go on meanwhile); never waits itself.
  future<task_group_status> wait_async();

  // Tasks that have not started are skipped; running ones can poll is_cancelling() or a token, and
  // operations started with token() are cancelled. The flag stays set until wait() returns
  // (task_group_status::cancelled) or rethrows. Thread-safe; never waits.
  void cancel() noexcept { cancel_.cancel(); }
  // Whether the group is cancelled (until the wait that reports it). Thread-safe.
  bool is_cancelling() const noexcept { return cancel_.cancelled(); }
  // Points into the group and keeps nothing alive (unlike a cancellation_source's tokens): the token,
  // and every operation started with it, must be done with before the group is destroyed. Thread-safe.
  cancellation_token token() const noexcept { return {&cancel_, nullptr}; }

 private:
  template <class F>
  friend class core_detail::group_task;
  friend void core_detail::group_wait(task_group&);
  friend class core_detail::group_wait_state;
  friend bool core_detail::runs_on_caller(const task_group&) noexcept;

  void finish_one() noexcept {
    // The last task to finish while a waiter sleeps reads the waiter's node and wakes it. The group
    // stays alive until then: a waiter that set the sleeping bit returns only once woken.
    const std::uint64_t before = state_.fetch_sub(2, std::memory_order_acq_rel);
    HEDDLE_ASSERT(before >= 2, "a task group's task finished that the group did not count");
    if (before == 3) {
      core_detail::continuation* w = waiter_.load(std::memory_order_acquire);
      w->ready(w);
    }
  }
  // The status a wait returns once the count reached zero, the first exception (if a task threw)
  // moved into `error`; the cancellation and error reset for the group's next use.
  task_group_status reset_after_wait(std::exception_ptr& error) noexcept;
  void record_error(std::exception_ptr e) noexcept {
    if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
    cancel();
  }

  core_detail::runtime_core* core_;
  std::atomic<std::uint64_t> state_{0};  // 2 × unfinished tasks, plus 1 while a waiter sleeps or a wait_async is armed
  std::atomic<core_detail::continuation*> waiter_{nullptr};
  mutable core_detail::cancel_state cancel_;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

namespace core_detail {

template <class F>
class group_task final : public task_base {
 public:
  template <class G>
  group_task(task_group* g, G&& f) : task_base(&vtable), group_(g) {
    ::new (static_cast<void*>(std::addressof(fn_))) F(std::forward<G>(f));
  }
  ~group_task() { fn_.~F(); }

 private:
  static void execute(task_base* t) noexcept {
    auto* self = static_cast<group_task*>(t);
    task_group* g = self->group_;
    if (!g->is_cancelling()) {
      try {
        std::invoke(std::move(self->fn_));
      } catch (...) {
        g->record_error(std::current_exception());
      }
    }
    free_record(self);
    g->finish_one();
  }
  static void discard(task_base* t) noexcept {
    auto* self = static_cast<group_task*>(t);
    task_group* g = self->group_;
    free_record(self);
    g->record_error(shutdown_error());
    g->finish_one();
  }
  static constexpr task_vtable vtable{&execute, &discard};

  task_group* group_;
  union {
    F fn_;
  };
};

}  // namespace core_detail

template <class F>
void task_group::run(F&& f) {
  state_.fetch_add(2, std::memory_order_relaxed);
  core_detail::task_base* t;
  try {
    t = core_detail::make_record<core_detail::group_task<std::decay_t<F>>>(this, std::forward<F>(f));
  } catch (...) {
    finish_one();
    throw;
  }
  core_detail::schedule(core_, t);
}

}  // namespace heddle
