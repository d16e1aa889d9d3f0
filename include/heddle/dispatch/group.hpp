// SPDX-License-Identifier: Apache-2.0
// heddle::group: says when a set of work is done. enter() and leave() count work in and out (one
// atomic operation each); notify(q, f) runs f on q once the count returns to zero; wait() waits for
// that.
//
// Contract:
// - Every notification runs exactly once: at the first time the count is zero after it was
//   registered (at once, if it is zero then). Notifications due at the same zero are handed to
//   their queues in the order they were registered. Work entered after a notification was
//   registered does not delay it if the count reached zero in between.
// - A group is reusable: after the count returns to zero it may be entered again, and new
//   notifications wait for the next zero.
// - Everything done before a leave() happens-before the notifications and waits that this
//   leave() releases.
// - wait() returns once the count is zero: from a worker it runs other tasks meanwhile; elsewhere
//   it sleeps. when_empty() is the same as a future.
// - More leave() than enter() calls is a programming error: heddle reports it and terminates.
//
// group is a handle: copies share the group, which lives while a handle or a group.async item
// refers to it. Dropping the last handle with notifications pending discards them. Thread safety,
// as a std::shared_ptr's: the calls on one group are thread-safe through any handles (each call
// says so below); one handle object is assigned or destroyed only while no other thread uses it.
#pragma once

#include <type_traits>
#include <utility>

#include "heddle/async/promise.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/dispatch/concurrent_queue.hpp"
#include "heddle/dispatch/detail/access.hpp"
#include "heddle/dispatch/detail/group_state.hpp"
#include "heddle/dispatch/serial_queue.hpp"

namespace heddle {

namespace dispatch_detail {
// Notifications: hand a prepared item to a serial queue, or a prepared task to a runtime.
HEDDLE_EXPORT group_node* make_queue_notification(queue_state* q, queue_item* item);
HEDDLE_EXPORT group_node* make_task_notification(core_detail::runtime_core* core, core_detail::task_base* t);
// A future that the next zero completes.
HEDDLE_EXPORT future<void> group_when_empty(group_state* g);
}  // namespace dispatch_detail

class HEDDLE_EXPORT group {
 public:
  group();
  group(const group& o) noexcept : s_(o.s_) { dispatch_detail::retain(s_); }
  group& operator=(const group& o) noexcept {
    group copy(o);
    std::swap(s_, copy.s_);
    return *this;
  }
  ~group() { dispatch_detail::release(s_); }

  // One more piece of pending work. Thread-safe, lock-free: any thread.
  void enter() noexcept { dispatch_detail::group_enter(s_); }
  // One piece less. Thread-safe: any thread; the leave that brings the count to zero hands the due
  // notifications to their queues on the calling thread. A misuse, which ends the process
  // ("heddle: misuse"): more leave() than enter() calls.
  void leave() noexcept { dispatch_detail::group_leave(s_); }

  // enter(), then runs f on q and leaves once f has returned or thrown (or the item was discarded
  // by a stopping runtime). Thread-safe; never waits.
  template <class F>
  void async(const serial_queue& q, F&& f) {
    using item = dispatch_detail::callable_item<std::decay_t<F>, dispatch_detail::group_leave_epilogue>;
    dispatch_detail::queue_state* qs = checked(q);
    dispatch_detail::queue_item* i = entered([&] {
      return dispatch_detail::make_item<item>(std::forward<F>(f), dispatch_detail::group_leave_epilogue(s_));
    });
    dispatch_detail::enqueue(qs, i);
  }
  template <class F>
  void async(const concurrent_queue& q, F&& f) {
    using task = dispatch_detail::concurrent_task<std::decay_t<F>, dispatch_detail::group_leave_epilogue>;
    core_detail::task_base* t = entered([&] {
      return core_detail::make_record<task>(std::forward<F>(f), dispatch_detail::group_leave_epilogue(s_));
    });
    core_detail::schedule(dispatch_detail::access::core_of(q), t);
  }

  // Runs f on q at the next zero of the count (at once if it is zero now). Thread-safe; never waits
  // for the zero.
  template <class F>
  void notify(const serial_queue& q, F&& f) {
    dispatch_detail::queue_state* qs = checked(q);
    auto* i = dispatch_detail::make_item<dispatch_detail::callable_item<std::decay_t<F>>>(std::forward<F>(f));
    dispatch_detail::group_node* n;
    try {
      n = dispatch_detail::make_queue_notification(qs, i);
    } catch (...) {
      i->vt->discard(i);
      throw;
    }
    dispatch_detail::group_add_node(s_, n);
  }
  template <class F>
  void notify(const concurrent_queue& q, F&& f) {
    auto* t = core_detail::make_record<dispatch_detail::concurrent_task<std::decay_t<F>>>(std::forward<F>(f));
    dispatch_detail::group_node* n;
    try {
      n = dispatch_detail::make_task_notification(dispatch_detail::access::core_of(q), t);
    } catch (...) {
      t->vt->discard(t);
      throw;
    }
    dispatch_detail::group_add_node(s_, n);
  }

  // Waits until the count is zero. Thread-safe; blocks: a worker runs other tasks meanwhile, another
  // thread sleeps. Not from work the group counts (it would wait for itself).
  void wait();
  // Ready at the next zero of the count (at once if it is zero now). Thread-safe.
  future<void> when_empty() { return dispatch_detail::group_when_empty(s_); }

  // The count now (racy: for diagnostics and tests). Thread-safe.
  std::size_t pending() const noexcept {
    return dispatch_detail::group_state::count(s_->word.load(std::memory_order_relaxed));
  }

 private:
  static dispatch_detail::queue_state* checked(const serial_queue& q) {
    if (!q.valid()) throw std::logic_error("heddle::group: the serial_queue handle was moved from");
    return dispatch_detail::access::state_of(q);
  }
  // enter(), with a reference for the record that make() builds; both undone if make() throws.
  template <class Make>
  auto entered(Make make) {
    dispatch_detail::group_enter(s_);
    dispatch_detail::retain(s_);
    try {
      return make();
    } catch (...) {
      dispatch_detail::group_leave(s_);
      dispatch_detail::release(s_);
      throw;
    }
  }

  dispatch_detail::group_state* s_;
};

}  // namespace heddle
