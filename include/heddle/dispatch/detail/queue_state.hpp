// SPDX-License-Identifier: Apache-2.0
// A serial queue's state, and the calls inlined code makes on it (the rest is src/dispatch).
//
// Producers push items onto `incoming`, a stack: one atomic exchange on one word, then a store
// into their own record linking it to the item below (never into another producer's record, so
// that two producers share one cache line, not three). The same word carries the `owned` bit:
// the queue runs on the scheduler only while it has work, and whoever pushes onto an unowned queue
// owns it from that exchange on. The owner is a drain task (or, for a queue targeting another, an
// item on that queue) or the caller of sync() running its function inline. It takes the whole
// stack at once, reverses it into its private `ready` list (oldest first: FIFO), runs a bounded
// batch of items and then yields if other work waits; it gives the queue up with a
// compare-exchange of `owned` alone to zero, which fails if anything was pushed meanwhile, so no
// wake-up is lost. An idle queue is this record alone: no task, no thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>

#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/export.hpp"
#include "heddle/dispatch/detail/queue_item.hpp"
#include "heddle/dispatch/detail/trace_kinds.hpp"

namespace heddle::dispatch_detail {

struct queue_extras;  // target and error handler, allocated only when one is set (serial_queue.cpp)

struct queue_state {
  // `incoming`: the newest pushed item's address, or'd with `owned`. Unowned implies empty.
  static constexpr std::uintptr_t owned = 1;
  // `control`: the suspend() count, and `parked` while the queue is suspended with its owner gone
  // (`owned` stays set, so producers only push; resume() schedules a new owner).
  static constexpr std::uint32_t parked = 1;
  static constexpr std::uint32_t suspend_unit = 2;  // bits 1..27
  // A drain task is scheduled to own the queue and has not started: a sync() caller may take the
  // ownership over by clearing the bit first (the task then finds itself superseded).
  static constexpr std::uint32_t drain_pending = 1u << 28;
  // The last handle went while the queue was suspended: nobody can resume it, so whatever reaches
  // it is discarded.
  static constexpr std::uint32_t dead = 1u << 29;
  static constexpr std::uint32_t targeted = 1u << 30;       // fixed at creation: runs inside another queue
  static constexpr std::uint32_t high_priority = 1u << 31;  // fixed at creation
  static constexpr std::uint32_t fixed = targeted | high_priority;
  static constexpr std::uint32_t suspend_mask = ~(parked | drain_pending | dead | fixed);

  std::atomic<std::uintptr_t> incoming{0};
  queue_item* ready = nullptr;  // the owner's: taken from `incoming`, oldest first
  std::atomic<std::uint32_t> control{0};
  // The handles (serial_queue objects) hold one reference together; the owner while scheduled,
  // pending timers and sources hold one each. Counted apart so that the last handle of a
  // suspended queue can discard its items, which may hold references to the queue themselves.
  std::atomic<std::uint32_t> refs{1};
  std::atomic<std::uint32_t> handles{1};
  core_detail::runtime_core* core;
  std::atomic<queue_extras*> extras{nullptr};
  // The label's characters follow the record (one allocation): see label().

  const char* label() const noexcept { return reinterpret_cast<const char*>(this + 1); }
};
// docs/dispatch.md and the README state what an idle queue costs: this record, its label and the handle.
static_assert(sizeof(queue_state) == 48, "an idle serial queue is a 48-byte record plus its label (docs/dispatch.md)");

// Creation and lifetime (serial_queue.cpp). A fresh queue has one handle.
HEDDLE_EXPORT queue_state* make_queue(core_detail::runtime_core* core, const char* label, std::size_t label_len,
                                      queue_state* target, bool high_priority);
inline void retain(queue_state* q) noexcept { q->refs.fetch_add(1, std::memory_order_relaxed); }
HEDDLE_EXPORT void release(queue_state* q) noexcept;
inline void retain_handle(queue_state* q) noexcept { q->handles.fetch_add(1, std::memory_order_relaxed); }
HEDDLE_EXPORT void release_handle(queue_state* q) noexcept;

// A producer pushed onto an unowned queue and owns it: parks it if suspended (discards its items
// if no handle is left to resume it), else schedules a drain task (or a drain item on the target).
HEDDLE_EXPORT void wake(queue_state* q) noexcept;

// What `next` holds between a producer's exchange and its link store; the owner waits it out.
inline queue_item* const linking = reinterpret_cast<queue_item*>(std::uintptr_t{2});

inline void enqueue(queue_state* q, queue_item* item) noexcept {
  // Traced: a sampled item's flow from here to its run (serial_queue.cpp, drain).
  if (core_detail::trace::on() && core_detail::trace::sampled(item)) [[unlikely]]
    core_detail::trace::emit_instant(trace_kinds::item_begin, nullptr, 0, 0, reinterpret_cast<std::uintptr_t>(item));
  item->next.store(linking, std::memory_order_relaxed);
  // acq_rel: publishes the item; a producer that takes the ownership sees the last owner's work.
  const std::uintptr_t below = q->incoming.exchange(reinterpret_cast<std::uintptr_t>(item) | queue_state::owned,
                                                    std::memory_order_acq_rel);
  item->next.store(reinterpret_cast<queue_item*>(below & ~queue_state::owned), std::memory_order_release);
  if (!(below & queue_state::owned)) [[unlikely]]
    wake(q);
}

// sync(): the caller's own thread runs the function when the queue is idle (unowned, hence empty),
// not suspended, and runs on no other queue, and the thread is one of the queue's runtime's workers
// or belongs to no runtime (it then lends itself to the queue's runtime for the call, see
// lending_scope). begin_inline says whether it may (then the caller owns the queue).
inline bool begin_inline(queue_state* q) noexcept {
  if (core_detail::worker* w = core_detail::current_worker; w && w->core != q->core) return false;
  if (q->control.load(std::memory_order_relaxed) & (queue_state::targeted | queue_state::suspend_mask)) return false;
  std::uintptr_t idle = 0;
  return q->incoming.compare_exchange_strong(idle, queue_state::owned, std::memory_order_acquire,
                                             std::memory_order_relaxed);
}
// Gives the queue back after its owner ran items itself (an inline sync, a take-over): parks it if
// suspended, schedules a drain owner if items are pending, else leaves it idle.
HEDDLE_EXPORT void end_inline(queue_state* q) noexcept;

// While a thread outside the runtime runs an item inline, what the item spawns belongs to the
// queue's runtime, as it would if a worker ran it.
struct lending_scope {
  core_detail::runtime_core* saved;
  explicit lending_scope(core_detail::runtime_core* core) noexcept : saved(core_detail::lending_core) {
    if (!core_detail::current_worker) core_detail::lending_core = core;
  }
  ~lending_scope() { core_detail::lending_core = saved; }
  lending_scope(const lending_scope&) = delete;
  lending_scope& operator=(const lending_scope&) = delete;
};

// What the calling thread is running items of, innermost first: sync() on any of these, or on a
// queue whose items would have to run inside one of these, would wait for itself.
struct queue_frame {
  queue_state* q;
  queue_frame* up;
};
HEDDLE_FAST_TLS(queue_frame*, current_queue_frame);  // src/dispatch/serial_queue.cpp

struct queue_frame_scope {
  queue_frame frame;
  explicit queue_frame_scope(queue_state* q) noexcept : frame{q, current_queue_frame} { current_queue_frame = &frame; }
  ~queue_frame_scope() { current_queue_frame = frame.up; }
  queue_frame_scope(const queue_frame_scope&) = delete;
  queue_frame_scope& operator=(const queue_frame_scope&) = delete;
};

// Waits until a sync item enqueued on q has run. If q's owner is a drain task that has not started
// yet and the caller is one of q's runtime's workers, it takes the queue over and runs the items
// up to its own.
HEDDLE_EXPORT void wait_sync(queue_state* q, core_detail::future_state_base* item);

// Throws queue_deadlock if sync(q) from this thread could never return.
HEDDLE_EXPORT void check_sync_allowed(queue_state* q);
// True if the calling thread is running an item of q (or of a queue targeting q).
HEDDLE_EXPORT bool runs_on(const queue_state* q) noexcept;

// Enqueues `item` once `deadline` has passed, through the runtime's timer engine; the item is
// discarded if the runtime stops first (or freed before this throws, if it is stopping).
HEDDLE_EXPORT void enqueue_at(queue_state* q, std::chrono::steady_clock::time_point deadline, queue_item* item);

HEDDLE_EXPORT void set_error_handler(queue_state* q, std::function<void(std::exception_ptr)> handler);

HEDDLE_EXPORT void suspend(queue_state* q) noexcept;
HEDDLE_EXPORT void resume(queue_state* q);  // std::logic_error if not suspended

}  // namespace heddle::dispatch_detail
