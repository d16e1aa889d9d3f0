// SPDX-License-Identifier: Apache-2.0
// The record behind shared_future: it owns the source future's state and is the one continuation
// attached to it (a future's state word holds one), and keeps its own list of listeners (the
// shared futures' successors and waiters), any number, added from any thread. Reference counted:
// each shared_future and each successor holds a reference, and so does the pending source, so
// the record outlives its handles until the source completes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/chain_state.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"

namespace heddle::core_detail {

template <class T>
class shared_state final : public continuation {
 public:
  // Takes `src` (a reference the caller held) with one reference for the caller's handle.
  shared_state(future_state<T>* src, runtime_core* home) noexcept
      : continuation{&on_source_ready}, src_(src), home_(home) {}

  // Called once, right after construction: listens to the source.
  void start() noexcept {
    if (!src_->attach(this)) on_source_ready(this);
  }

  bool is_done() const noexcept { return head_.load(std::memory_order_acquire) == closed(); }

  // Runs `l` once the source is complete; false if it already is (then the caller runs it).
  bool listen(listener* l) noexcept {
    listener* h = head_.load(std::memory_order_acquire);
    do {
      if (h == closed()) return false;
      l->next = h;
    } while (!head_.compare_exchange_weak(h, l, std::memory_order_acq_rel, std::memory_order_acquire));
    return true;
  }

  void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      src_->fvt()->destroy(src_);  // complete by now: the pending source held a reference
      free_record(this);
    }
  }

  // The completed source (read only after is_done() or a listener's call).
  future_state<T>* source() const noexcept { return src_; }
  runtime_core* home() const noexcept { return home_; }

 private:
  // Marks the list closed: never a listener's address (listeners are 16-byte aligned).
  static listener* closed() noexcept { return reinterpret_cast<listener*>(std::uintptr_t{1}); }

  static void on_source_ready(continuation* c) noexcept {
    auto* s = static_cast<shared_state*>(c);
    listener* l = s->head_.exchange(closed(), std::memory_order_acq_rel);
    // Run in the order they were added (the list is a stack). Each node may be freed by its own
    // call, so its successor is read first.
    listener* fifo = nullptr;
    while (l) {
      listener* next = l->next;
      l->next = fifo;
      fifo = l;
      l = next;
    }
    while (fifo) {
      listener* next = fifo->next;
      fifo->ready(fifo);
      fifo = next;
    }
    s->unref();  // the pending source's reference
  }

  future_state<T>* src_;
  runtime_core* home_;
  std::atomic<std::size_t> refs_{2};  // the first handle, and the pending source
  std::atomic<listener*> head_{nullptr};
};

// A shared state as a successor's source: the value is passed as a const reference, as every
// successor and every handle reads the same one.
template <class T>
struct shared_source {
  shared_state<T>* s;

  bool attach(listener* l) noexcept { return s->listen(l); }
  const std::exception_ptr* error() const noexcept { return s->source()->error(); }
  template <class F>
  decltype(auto) invoke(F&& f) {
    if constexpr (std::is_void_v<T>) return std::invoke(std::forward<F>(f));
    else return std::invoke(std::forward<F>(f), std::as_const(s->source()->value_ref()));
  }
  void drop() noexcept { s->unref(); }
};

template <class T, class F>
struct shared_continuation_result {
  using type = std::remove_cvref_t<std::invoke_result_t<F, const T&>>;
};
template <class F>
struct shared_continuation_result<void, F> {
  using type = std::remove_cvref_t<std::invoke_result_t<F>>;
};

// One thread waiting on a shared state: a record on the waiter's stack that the shared state
// completes as a listener, so that the waiter waits on it as on any future that is no task's
// (helping on a worker, sleeping elsewhere: scheduling.hpp). Each waiter has its own, so any
// number of threads wait at once. A source that its waiter can drive (an offloaded call's reply)
// is driven through the waiter's record.
class shared_waiter final : public future_state<void>, public listener {
 public:
  explicit shared_waiter(future_state_base* source) noexcept
      : future_state<void>(&vtable), listener(&on_ready), source_(source) {}

 private:
  static void on_ready(continuation* c) noexcept { static_cast<shared_waiter*>(c)->complete(); }
  static void drive(future_state_base* b) noexcept {
    future_state_base* src = static_cast<shared_waiter*>(b)->source_;
    if (auto d = src->fvt()->drive) d(src);
  }
  [[noreturn]] static void never_freed(future_state_base*) noexcept {
    fatal_internal("a shared future's waiter, which lives on its waiter's stack, was freed", "heddle::shared_future");
  }
  static constexpr future_vtable vtable{not_a_task, nullptr, &never_freed, &drive};

  future_state_base* source_;
};

template <class T>
void wait_shared(shared_state<T>* s) {
  if (s->is_done()) return;
  shared_waiter w(s->source());
  if (s->listen(&w)) force(&w);
}

}  // namespace heddle::core_detail
