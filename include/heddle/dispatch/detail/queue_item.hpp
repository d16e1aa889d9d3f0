// SPDX-License-Identifier: Apache-2.0
// The unit a serial queue holds: an item record, pushed onto the queue's incoming stack and then
// linked into its owner's ready list. Records come from the item arena (item_arena.hpp), so
// enqueueing never calls malloc.
#pragma once

#include <atomic>
#include <exception>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/detached_task.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"
#include "heddle/dispatch/detail/item_arena.hpp"

namespace heddle::dispatch_detail {

struct queue_state;
struct queue_item;

struct queue_item_vtable {
  // Runs the item on `q`, which the calling thread holds, and frees it (or hands it on: an item
  // is unlinked before it runs, so it may enqueue itself again).
  void (*run)(queue_item*, queue_state* q) noexcept;
  // The item will never run (its runtime stopped, or its queue was dropped while suspended):
  // releases what it holds and frees it.
  void (*discard)(queue_item*) noexcept;
};

struct queue_item {
  std::atomic<queue_item*> next{nullptr};
  const queue_item_vtable* vt;
  explicit queue_item(const queue_item_vtable* v) noexcept : vt(v) {}
};

// Called by an item whose function threw: the queue's error handler, or report and terminate.
HEDDLE_EXPORT void report_item_error(queue_state* q, std::exception_ptr e) noexcept;

// q.async(f): runs f, reports what it throws, then runs `After`. Made with make_item (item_arena.hpp).
template <class F, class After = core_detail::no_epilogue>
struct callable_item final : queue_item {
  template <class G>
  explicit callable_item(G&& g, After a = {}) : queue_item(&vtable), fn(std::forward<G>(g)), after(std::move(a)) {}
  F fn;
  After after;

  static void run(queue_item* i, queue_state* q) noexcept {
    auto* self = static_cast<callable_item*>(i);
    try {
      self->fn();
    } catch (...) {
      report_item_error(q, std::current_exception());
    }
    finish(self);
  }
  static void discard(queue_item* i) noexcept { finish(static_cast<callable_item*>(i)); }
  static void finish(callable_item* self) noexcept {
    After a = std::move(self->after);
    destroy_item(self);
    a();
  }
  static constexpr queue_item_vtable vtable{&run, &discard};
};

// q.sync(f): the record lives on the caller's stack, which waits on it as on a future; f's result
// or exception is stored in place and the waiter takes it from there.
template <class T, class F>
struct sync_item final : queue_item, core_detail::future_state<T> {
  explicit sync_item(F& f) noexcept : queue_item(&vtable), core_detail::future_state<T>(&state_vtable), fn(f) {}
  F& fn;

  static void run(queue_item* i, queue_state*) noexcept {
    auto* self = static_cast<sync_item*>(i);
    try {
      self->set_value_from(self->fn);
    } catch (...) {
      self->set_error(std::current_exception());
    }
    self->complete();  // the caller may return (and the record vanish) from here on
  }
  static void discard(queue_item* i) noexcept {
    auto* self = static_cast<sync_item*>(i);
    self->set_error(core_detail::shutdown_error());
    self->complete();
  }
  static void never(core_detail::task_base*) noexcept {
    core_detail::fatal_internal("a sync item's state was run as a task", "heddle::serial_queue::sync");
  }
  static void never_destroyed(core_detail::future_state_base*) noexcept {
    core_detail::fatal_internal("a sync item, which lives on the caller's stack, was freed",
                                "heddle::serial_queue::sync");
  }
  static constexpr queue_item_vtable vtable{&run, &discard};
  static constexpr core_detail::future_vtable state_vtable{{&never, &never}, nullptr, &never_destroyed};
};

}  // namespace heddle::dispatch_detail
