// SPDX-License-Identifier: Apache-2.0
// heddle::serial_queue: items run one at a time, in the order they were submitted, on the
// runtime's workers. A module that owns a serial queue needs no lock: whatever touches its state
// goes through the queue.
//
// Contract:
// - FIFO and mutual exclusion: items of one queue never overlap, and run in submission order (per
//   producer; items from different threads in the order their enqueues took effect). Each item
//   happens-before the next.
// - Enqueueing is lock-free and never waits. A queue with pending items is run by one task on the
//   scheduler, which runs at most a bounded batch before it yields its worker; an idle queue costs
//   no task and no thread, only its record: 48 bytes plus the label.
// - sync(f) returns f's result, or throws what f threw. From a worker it runs other tasks while it
//   waits, except inside an item of a queue, where it runs only the queues it waits for; elsewhere
//   it sleeps. When the queue is idle it runs f on the calling thread at once (a worker of the
//   queue's runtime, or a thread of none, whose spawns then go to the queue's runtime).
//   sync() from an item that the queue (or a queue it targets) is running throws queue_deadlock.
// - An exception from an async item goes to the queue's error handler, called on the thread that
//   ran the item, still inside the queue; with none set, heddle reports it on stderr with the
//   queue's label and terminates, as an unhandled exception would.
// - suspend() stops the queue after the item it is running; items queue up until as many resume()
//   calls have been made. Resuming a queue that is not suspended is a std::logic_error.
// - A queue that targets another runs its items as items of the target: the items of both never
//   overlap, and suspending the target holds both.
// - A high-priority queue's batches go on the runtime's express lane, which every worker looks at
//   between tasks.
//
// serial_queue is a handle: copies share the queue, which lives while a handle, a pending item or
// a pending after() refers to it. Thread safety, as a std::shared_ptr's: the calls on one queue are
// thread-safe through any handles (each call says so below); one handle object is assigned or
// destroyed only while no other thread uses it. Dropping the last handle of a suspended queue discards its items,
// and whatever reaches it later (a delayed item, a source's or a child queue's): nothing can
// resume it any more.
// A queue belongs to the runtime it was made on and must not outlive it; when the runtime stops,
// items that never ran are discarded (sync callers get task_cancelled).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "heddle/async/detail/deadline.hpp"
#include "heddle/async/timer.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/dispatch/detail/queue_state.hpp"
#include "heddle/dispatch/detail/schedule_item.hpp"
#include "heddle/dispatch/errors.hpp"

namespace heddle {

namespace dispatch_detail {
struct access;
}  // namespace dispatch_detail

enum class queue_priority : std::uint8_t { normal, high };

class group;

class HEDDLE_EXPORT serial_queue {
 public:
  // A queue on the calling worker's runtime (or, elsewhere, the default runtime). Thread-safe.
  explicit serial_queue(std::string_view label = {}, queue_priority priority = queue_priority::normal);
  serial_queue(runtime& rt, std::string_view label = {}, queue_priority priority = queue_priority::normal);
  // A queue whose items run as items of `target` (on its runtime, with its priority). Thread-safe.
  serial_queue(std::string_view label, const serial_queue& target);

  serial_queue(const serial_queue& o) noexcept : s_(o.s_) {
    if (s_) dispatch_detail::retain_handle(s_);
  }
  serial_queue(serial_queue&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  serial_queue& operator=(serial_queue o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~serial_queue() {
    if (s_) dispatch_detail::release_handle(s_);
  }

  // Runs f() on the queue, after every item submitted before it. Thread-safe; never waits for the
  // queue: any thread, an item of this queue included.
  template <class F>
  void async(F&& f) {
    check();
    dispatch_detail::enqueue(
        s_, dispatch_detail::make_item<dispatch_detail::callable_item<std::decay_t<F>>>(std::forward<F>(f)));
  }

  // Runs f() on the queue and returns its result (by value), or throws its exception. Thread-safe;
  // blocks until f() has run: a worker runs other tasks meanwhile (inside an item, only the queues
  // it waits for), another thread sleeps. Not from an item that this queue, or a queue it targets,
  // is running: that throws queue_deadlock.
  template <class F>
  std::remove_cvref_t<std::invoke_result_t<F&>> sync(F&& f) {
    using T = std::remove_cvref_t<std::invoke_result_t<F&>>;
    check();
    dispatch_detail::check_sync_allowed(s_);
    if (dispatch_detail::begin_inline(s_)) {
      struct give_back {
        dispatch_detail::queue_state* q;
        ~give_back() { dispatch_detail::end_inline(q); }
      } owner{s_};
      dispatch_detail::queue_frame_scope frame(s_);
      dispatch_detail::lending_scope lend(s_->core);
      return std::invoke(f);
    }
    dispatch_detail::sync_item<T, std::remove_reference_t<F>> item(f);
    dispatch_detail::enqueue(s_, &item);
    dispatch_detail::wait_sync(s_, &item);
    if constexpr (std::is_void_v<T>) item.value_ref();
    else return std::move(item.value_ref());
  }

  // Runs f() on the queue once `delay` has passed. The timer engine waits; no thread is held.
  // Thread-safe; never waits.
  template <class Rep, class Period, class F>
  void after(std::chrono::duration<Rep, Period> delay, F&& f) {
    at(async_detail::deadline_after(delay), std::forward<F>(f));
  }
  template <class F>
  void at(std::chrono::steady_clock::time_point deadline, F&& f) {
    check();
    auto* item = dispatch_detail::make_item<dispatch_detail::callable_item<std::decay_t<F>>>(std::forward<F>(f));
    dispatch_detail::enqueue_at(s_, deadline, item);
  }

  // co_await q.schedule() in a heddle::co_task: the coroutine goes on as an item of this queue, one
  // at a time with its other items and in order with them, up to its next suspension (or its end);
  // what it does after that suspension runs where the awaited operation resumes it, outside the
  // queue, unless it awaits schedule() again. Always suspends (even on the queue's own thread), and
  // costs what q.async does but for the item's allocation: the item lives in the coroutine's frame.
  // If the item never runs (the runtime stops, the queue is dropped while suspended), the
  // coroutine's chain is destroyed and spawn's future fails with task_cancelled (coroutines.md).
  // Thread-safe (it only makes the awaiter).
  dispatch_detail::queue_schedule_awaiter schedule() const {
    check();
    return dispatch_detail::queue_schedule_awaiter(s_);
  }

  // Stops the queue after the item it is running (at once if it runs none); items queue up until as
  // many resume() calls have been made. Thread-safe, never waits: any thread, an item of this queue
  // included. Each suspend() must be undone by one resume(): dropping the last handle of a
  // suspended queue discards its items and everything that reaches it later.
  void suspend() {
    check();
    dispatch_detail::suspend(s_);
  }
  // Undoes one suspend(); the last one schedules the queue's waiting items. Thread-safe, never
  // waits. More resume() than suspend() calls throw std::logic_error (the queue is left as it was).
  void resume() {
    check();
    dispatch_detail::resume(s_);
  }

  // Where exceptions from async items go (the default, an empty function: report and terminate).
  // Called on the thread that ran the item, inside the queue; it must not throw (if it does, heddle
  // reports it and terminates). Thread-safe: an item that fails meanwhile gets the old handler or
  // the new one.
  void set_error_handler(std::function<void(std::exception_ptr)> handler);

  // The label given at creation. Thread-safe.
  const char* label() const noexcept { return s_ ? s_->label() : ""; }
  // True on a thread that holds this queue: it runs an item of this queue (or of a queue targeting
  // it), possibly further down its stack, while that item waits in sync() and runs the awaited
  // queue's earlier items. An assertion for code that must only run there. Thread-safe: answers for
  // the calling thread.
  bool is_current() const noexcept { return s_ && dispatch_detail::runs_on(s_); }
  // False for a moved-from handle. Thread-safe.
  bool valid() const noexcept { return s_ != nullptr; }
  friend bool operator==(const serial_queue& a, const serial_queue& b) noexcept { return a.s_ == b.s_; }

 private:
  friend struct dispatch_detail::access;  // state_of: for groups and sources
  void check() const;
  dispatch_detail::queue_state* s_;
};
static_assert(sizeof(serial_queue) == 8, "a serial_queue handle is one pointer, 8 bytes (docs/dispatch.md)");

}  // namespace heddle
