// SPDX-License-Identifier: Apache-2.0
// The shared state behind a future: a task record that also holds the result.
// A future's state word goes pending -> done exactly once; before that it may hold one attached
// continuation (a `then` successor, a when_all slot or a sleeping waiter), or `abandoned` once the
// future was dropped unread, in which case whoever completes it frees it.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"

namespace heddle::core_detail {

class future_state_base;

struct future_vtable : task_vtable {
  // Computes and stores the result without publishing it (the owner's fast path).
  void (*run)(task_base*) noexcept;
  // Destroys the stored result and frees the record.
  void (*destroy)(future_state_base*) noexcept;
  // For a state that a waiting thread can itself bring closer to done (the reply of an offloaded
  // call, which the waiter can poll the transport for): a thread that is not a worker calls it
  // before it sleeps on the state. It returns once the state is done or it gives up.
  void (*drive)(future_state_base*) noexcept = nullptr;
};

// The task half of the table for a state that is never queued nor run as a task (a promise's, a
// ready future's, a reply's, a group's wait): reaching it is a bug.
[[noreturn]] inline void never_queued(task_base*) noexcept {
  fatal_internal("a state that is never queued was run or dropped as a task", "heddle::core_detail::not_a_task");
}
inline constexpr task_vtable not_a_task{&never_queued, &never_queued};

enum class result_kind : std::uint8_t { none, value, error };

class HEDDLE_EXPORT future_state_base : public task_base {
 public:
  static constexpr std::uintptr_t pending = 0, done = 1, abandoned = 2;

  explicit future_state_base(const future_vtable* v) noexcept : task_base(v) {}

  const future_vtable* fvt() const noexcept { return static_cast<const future_vtable*>(vt); }
  bool is_done() const noexcept { return state.load(std::memory_order_acquire) == done; }

  // Publishes the stored result. The record may be gone when this returns.
  void complete() noexcept {
    std::uintptr_t prev = state.exchange(done, std::memory_order_acq_rel);
    HEDDLE_ASSERT(prev != done, "a future's state completed twice");
    if (prev == pending) return;
    if (prev == abandoned) return fvt()->destroy(this);
    auto* c = reinterpret_cast<continuation*>(prev);
    c->ready(c);
  }

  // Completes a record that its consumer popped and ran itself: nobody else can see it unless a
  // waiter node is still attached from an earlier wait, so a plain store usually does.
  void complete_owned() noexcept {
    if (state.load(std::memory_order_relaxed) == pending) state.store(done, std::memory_order_release);
    else complete();
  }

  // Consumer side: run `c` on completion. False if already complete (then run it yourself).
  bool attach(continuation* c) noexcept {
    HEDDLE_ASSERT(reinterpret_cast<std::uintptr_t>(c) > abandoned,
                  "a continuation's address collides with a state word");
    std::uintptr_t expected = pending;
    const bool attached = state.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(c),
                                                        std::memory_order_acq_rel, std::memory_order_acquire);
    // One consumer, one continuation: the word was pending or done, never another's node.
    HEDDLE_ASSERT(attached || expected == done, "a second continuation attached to a future's state");
    return attached;
  }

  // Consumer side, for a waiter: like attach, but replaces a waiter node that an earlier wait
  // left behind (a waiter returns once the state is done, without detaching its node).
  bool attach_waiter(continuation* c) noexcept {
    std::uintptr_t cur = state.load(std::memory_order_acquire);
    HEDDLE_ASSERT(cur != abandoned, "a wait on a future's state its consumer has released");
    while (cur != done)
      if (state.compare_exchange_weak(cur, reinterpret_cast<std::uintptr_t>(c), std::memory_order_acq_rel,
                                      std::memory_order_acquire))
        return true;
    return false;
  }

  // Consumer side: the future is gone. Frees the record now, or leaves that to the completer.
  void release() noexcept {
    std::uintptr_t prev = state.load(std::memory_order_acquire);
    if (prev != done) prev = state.exchange(abandoned, std::memory_order_acq_rel);
    HEDDLE_ASSERT(prev != abandoned, "a future's state released twice");
    if (prev == done) fvt()->destroy(this);
  }

  std::atomic<std::uintptr_t> state{pending};
  result_kind kind = result_kind::none;
};
// The task header, the state word and the result's kind: what docs/core.md counts before the result.
static_assert(sizeof(future_state_base) == 48, "a future's record starts with 48 bytes (docs/core.md)");

template <class T>
class future_state : public future_state_base {
 public:
  explicit future_state(const future_vtable* v) noexcept : future_state_base(v) {}
  ~future_state() {
    if (kind == result_kind::value) value_.~T();
    else if (kind == result_kind::error) error_.~exception_ptr();
  }

  template <class... A>
  void set_value(A&&... a) {
    HEDDLE_ASSERT(kind == result_kind::none, "a future's result stored twice");
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<A>(a)...);
    kind = result_kind::value;
  }
  // Stores the result of calling f() directly into place (no intermediate move).
  template <class F>
  void set_value_from(F&& f) {
    HEDDLE_ASSERT(kind == result_kind::none, "a future's result stored twice");
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<F>(f)());
    kind = result_kind::value;
  }
  void set_error(std::exception_ptr e) noexcept {
    HEDDLE_ASSERT(kind == result_kind::none, "a future's result stored twice");
    ::new (static_cast<void*>(std::addressof(error_))) std::exception_ptr(std::move(e));
    kind = result_kind::error;
  }
  T& value_ref() {
    HEDDLE_ASSERT(kind != result_kind::none, "a future's result read before it was stored");
    if (kind == result_kind::error) [[unlikely]]
      std::rethrow_exception(error_);
    return value_;
  }
  const std::exception_ptr* error() const noexcept { return kind == result_kind::error ? &error_ : nullptr; }

 private:
  union {
    T value_;
    std::exception_ptr error_;
  };
};

template <>
class future_state<void> : public future_state_base {
 public:
  explicit future_state(const future_vtable* v) noexcept : future_state_base(v) {}
  ~future_state() {
    if (kind == result_kind::error) error_.~exception_ptr();
  }
  void set_value() noexcept {
    HEDDLE_ASSERT(kind == result_kind::none, "a future's result stored twice");
    kind = result_kind::value;
  }
  template <class F>
  void set_value_from(F&& f) {
    HEDDLE_ASSERT(kind == result_kind::none, "a future's result stored twice");
    std::forward<F>(f)();
    kind = result_kind::value;
  }
  void set_error(std::exception_ptr e) noexcept {
    HEDDLE_ASSERT(kind == result_kind::none, "a future's result stored twice");
    ::new (static_cast<void*>(std::addressof(error_))) std::exception_ptr(std::move(e));
    kind = result_kind::error;
  }
  void value_ref() {
    HEDDLE_ASSERT(kind != result_kind::none, "a future's result read before it was stored");
    if (kind == result_kind::error) [[unlikely]]
      std::rethrow_exception(error_);
  }
  const std::exception_ptr* error() const noexcept { return kind == result_kind::error ? &error_ : nullptr; }

 private:
  union {
    std::exception_ptr error_;
  };
};

// The error a task gets when its runtime stops before running it.
HEDDLE_EXPORT std::exception_ptr shutdown_error();

// Allocates and constructs a record; the block goes back if the constructor throws.
template <class S, class... A>
S* make_record(A&&... a) {
  void* p = allocate_record<S>();
  try {
    return ::new (p) S(std::forward<A>(a)...);
  } catch (...) {
    deallocate_record<S>(p);
    throw;
  }
}

// A spawned callable with its bound arguments, and the result it produces.
template <class T, class Fn, class... Args>
class task_state final : public future_state<T> {
 public:
  template <class F, class... A>
  explicit task_state(F&& f, A&&... a) : future_state<T>(&vtable) {
    ::new (static_cast<void*>(std::addressof(call_))) call_type(std::forward<F>(f), std::forward<A>(a)...);
  }
  ~task_state() {}

 private:
  using call_type = std::tuple<Fn, Args...>;

  static void run(task_base* t) noexcept {
    auto* s = static_cast<task_state*>(t);
    try {
      s->set_value_from([s]() -> decltype(auto) { return std::apply(invoker{}, std::move(s->call_)); });
    } catch (...) {
      s->set_error(std::current_exception());
    }
    s->call_.~call_type();
  }
  static void execute(task_base* t) noexcept {
    run(t);
    static_cast<task_state*>(t)->complete();
  }
  static void discard(task_base* t) noexcept {
    auto* s = static_cast<task_state*>(t);
    s->call_.~call_type();
    s->set_error(shutdown_error());
    s->complete();
  }
  static void destroy(future_state_base* b) noexcept { free_record(static_cast<task_state*>(b)); }

  struct invoker {
    template <class... X>
    decltype(auto) operator()(X&&... x) const {
      return std::invoke(std::forward<X>(x)...);
    }
  };

  static constexpr future_vtable vtable{{&execute, &discard}, &run, &destroy};

  union {
    call_type call_;
  };
};

}  // namespace heddle::core_detail
