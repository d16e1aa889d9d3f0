// SPDX-License-Identifier: Apache-2.0
// co_await q.schedule() (serial_queue.hpp): the queue item that goes on with a coroutine as an item
// of the queue. It lives in the suspended coroutine's frame (an awaiter): no allocation.
#pragma once

#include <coroutine>

#include "heddle/core/detail/coroutine.hpp"
#include "heddle/dispatch/detail/queue_state.hpp"

namespace heddle::dispatch_detail {

class queue_schedule_awaiter final : private queue_item {
 public:
  explicit queue_schedule_awaiter(queue_state* q) noexcept : queue_item(&vtable), q_(q) {}
  queue_schedule_awaiter(const queue_schedule_awaiter&) = delete;

  bool await_ready() const noexcept { return false; }
  template <class P>
  void await_suspend(std::coroutine_handle<P> h) noexcept {
    h_ = h;
    if constexpr (core_detail::rooted_promise<P>) root_ = h.promise().root();
    enqueue(q_, this);  // the coroutine may run (and its frame, this awaiter, go) from here on
  }
  void await_resume() const noexcept {}

 private:
  // The item's part of the coroutine: from here to its next suspension (or its end). The frame
  // that holds this item may be gone once resume returns; the queue does not touch it again.
  static void run(queue_item* i, queue_state*) noexcept { static_cast<queue_schedule_awaiter*>(i)->h_.resume(); }
  // Never run (the runtime stopped, the queue was dropped while suspended): the coroutine's chain
  // is destroyed, as a discarded resumption's is (coroutine.hpp).
  static void discard(queue_item* i) noexcept {
    auto* a = static_cast<queue_schedule_awaiter*>(i);
    if (core_detail::coroutine_root* root = a->root_) return root->abandon(root);
    a->h_.destroy();
  }
  static constexpr queue_item_vtable vtable{&run, &discard};

  queue_state* q_;
  std::coroutine_handle<> h_;
  core_detail::coroutine_root* root_ = nullptr;
};

}  // namespace heddle::dispatch_detail
