// SPDX-License-Identifier: Apache-2.0
// heddle::future<T>: the handle to a value that a task, a continuation or a promise will produce.
//
// Forcing a future (`*f`, `f.get()`, `f.wait()`) on a worker runs other tasks until the value is
// there: first the tasks on the worker's own deque, then, if the awaited task was stolen, tasks
// stolen back from its thief (leapfrogging), so helping never nests unrelated work deeply on the
// stack. On any other thread it sleeps in the kernel. Futures are move-only; any thread may force
// one, one thread at a time.
//
// Thread safety: a future is not thread-safe: one thread at a time uses it (any thread, and it may
// be handed from one to another); the task or promise completing it meanwhile is what it is made
// for. For several threads waiting on one result, share() it (shared_future.hpp).
//
// A future remembers the runtime it belongs to (the one its task or operation runs on); successors
// made with `then` run there, whichever thread calls `then`. A promise's future belongs to no
// runtime until `then` is called: its successors run on the caller's runtime.
//
// `then` unwraps: a continuation that returns a future<U> gives a future<U> that completes when
// that inner future does. `share()` turns a future into a copyable shared_future (shared_future.hpp).
#pragma once

#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/chain_state.hpp"
#include "heddle/core/detail/continuation_state.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/errors.hpp"

namespace heddle {

template <class T>
class [[nodiscard]] future;
template <class T>
class [[nodiscard]] shared_future;

namespace core_detail {

struct access;

template <class X>
inline constexpr bool is_future_v = false;
template <class X>
inline constexpr bool is_future_v<future<X>> = true;

struct adopt_t {
  explicit adopt_t() = default;
};
inline constexpr adopt_t adopt{};

template <class T>
class future_base {
 public:
  using value_type = T;

  future_base() noexcept = default;
  future_base(adopt_t, future_state<T>* s, runtime_core* home = nullptr) noexcept : s_(s), home_(home) {}
  future_base(future_base&& o) noexcept : s_(std::exchange(o.s_, nullptr)), home_(o.home_) {}
  future_base& operator=(future_base&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
      home_ = o.home_;
    }
    return *this;
  }
  ~future_base() { reset(); }

  // True while the future refers to a state (not default-constructed, moved from or consumed by then).
  // Not thread-safe (the future's holder).
  bool valid() const noexcept { return s_ != nullptr; }
  // True once the value or the exception is there; never waits. Not thread-safe (the holder).
  bool is_ready() const noexcept { return s_ && s_->is_done(); }
  // Waits (helping on a worker) until ready. Does not throw the task's exception. Not thread-safe:
  // one thread at a time, any thread; blocks: a worker runs other tasks meanwhile, another thread
  // sleeps.
  void wait() const {
    check();
    force(s_);
  }

  // Returns a future of f(value) (f() for future<void>), run as a task once this one is ready.
  // An exception stored here skips f and is passed on. Consumes this future. Completed by a worker
  // (a task's future), the successor goes on that worker's deque; completed elsewhere (an async
  // operation, a promise), it starts by default_strategy (strategy.hpp).
  // If f returns a future<U>, the result is that future unwrapped: a future<U> that completes when
  // the inner one does (on the inner one's completing thread; nothing waits for it), with its
  // value or exception; an inner future without state fails it with invalid_future.
  // Costs one record (no thread, no allocator call for a small f). Throws invalid_future if this
  // future has no state; an exception of f goes into the returned future. Not thread-safe (the
  // holder's call, from any thread); never waits.
  template <class F>
  [[nodiscard]] auto then(F&& f) && {
    return chain(std::forward<F>(f), strategy::normal, /*timed=*/false);
  }

  // The same, started by `how` (strategy.hpp) once this future is ready, with its latency from
  // completion to start recorded in the runtime's stats. For the successor of an async operation,
  // a promise or a when_all over them.
  template <class F>
  [[nodiscard]] auto then(strategy how, F&& f) && {
    return chain(std::forward<F>(f), how, /*timed=*/true);
  }

  // A copyable handle to the same result (shared_future.hpp); consumes this future. Costs one
  // small record. Throws invalid_future if this future has no state. Not thread-safe (the
  // holder's call); never waits.
  [[nodiscard]] shared_future<T> share() &&;

 protected:
  friend struct access;  // state_of, home_of: for the layers built on futures
  template <class, class, class, bool>
  friend class chain_state;  // takes the state of the future a continuation returned (unwrapping)

  template <class F>
  auto chain(F&& f, strategy how, bool timed) {
    check();
    using R = continuation_result_t<T, std::decay_t<F>>;
    runtime_core* home = successor_home();
    if constexpr (is_future_v<R>) {
      using U = typename R::value_type;
      using C = chain_state<U, owned_source<T>, std::decay_t<F>, /*Unwrap=*/true>;
      C* c = make_record<C>(owned_source<T>{s_}, std::forward<F>(f), home, how, timed);
      s_ = nullptr;
      c->start();
      return future<U>(adopt, c, home);
    } else {
      using C = then_state<R, T, std::decay_t<F>>;
      C* c = make_record<C>(s_, std::forward<F>(f), home, how, timed);
      s_ = nullptr;
      c->start();
      return future<R>(adopt, c, home);
    }
  }

  void check() const {
    if (!s_) [[unlikely]]
      throw invalid_future("heddle::future: no state (default-constructed, moved from, or consumed by then)");
  }
  future_state<T>* ready_state() const {
    wait();
    return s_;
  }
  void reset() noexcept {
    if (s_) std::exchange(s_, nullptr)->release();
  }

  runtime_core* successor_home() const { return home_ ? home_ : current_core(); }

  future_state<T>* s_ = nullptr;
  runtime_core* home_ = nullptr;
};

}  // namespace core_detail

// [[nodiscard]]: a call that returns a future (a task, a timer, an operation, a remote call) and
// whose future is dropped is a compiler warning. Dropping one is allowed (the work still runs, its
// result or exception is discarded); write (void) where that is meant.
template <class T>
class [[nodiscard]] future : public core_detail::future_base<T> {
 public:
  using core_detail::future_base<T>::future_base;

  // The value; rethrows the task's exception. The reference lives as long as the future. Not
  // thread-safe: one thread at a time; waits as wait() does.
  T& get() & { return this->ready_state()->value_ref(); }
  const T& get() const& { return this->ready_state()->value_ref(); }
  // Moves the value out of a future about to be discarded.
  T get() && { return std::move(this->ready_state()->value_ref()); }

  T& operator*() & { return get(); }
  const T& operator*() const& { return get(); }
  T operator*() && { return std::move(*this).get(); }
  T* operator->() { return &get(); }
  const T* operator->() const { return &get(); }
};

template <>
class [[nodiscard]] future<void> : public core_detail::future_base<void> {
 public:
  using core_detail::future_base<void>::future_base;
  // Waits, then rethrows the task's exception if it threw. Not thread-safe: one thread at a time;
  // waits as wait() does.
  void get() const { ready_state()->value_ref(); }
  void operator*() const { get(); }
};

}  // namespace heddle

// shared_future, and share()'s definition, which need future complete.
#include "heddle/core/shared_future.hpp"  // IWYU pragma: keep
