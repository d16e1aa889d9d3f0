// SPDX-License-Identifier: Apache-2.0
// heddle::shared_future<T>: a copyable handle to one result, made by future<T>::share().
//
// Every copy reads the same value (get() returns const T&) or rethrows the same exception; any
// number of copies may wait, read and chain successors at once, from any threads (one thread per
// copy at a time, as with any object). The result lives as long as the last copy or successor.
// Below, "thread-safe (own copy)": any number of threads at once, each calling on its own copy.
//
// Cost: share() takes one small record (from the worker's magazine, no allocator call), which
// becomes the source's one continuation; copies count references (an atomic add and subtract).
// A waiter that finds the result missing waits as on a future that is no task's (docs/core.md:
// "What forcing does"): it helps on a worker, sleeps elsewhere; it does not run the source task
// inline as forcing a task's own future can.
//
// Departure from std::experimental::shared_future: `then` passes the value (const T&) to the
// continuation, as future<T>::then passes it, not the shared_future itself; a stored exception
// skips the continuation and is passed on.
#pragma once

#include <utility>

#include "heddle/core/detail/chain_state.hpp"
#include "heddle/core/detail/shared_state.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle {

template <class T>
class [[nodiscard]] shared_future {
 public:
  using value_type = T;

  // Not valid(): forcing it or chaining on it throws invalid_future.
  shared_future() noexcept = default;
  // future.share(). Throws invalid_future if `f` has no state (std::shared_future would be
  // invalid instead: heddle refuses it where the mistake is made).
  shared_future(future<T>&& f)
      : shared_future(std::move(f).share()) {}  // NOLINT(google-explicit-constructor): as std::shared_future
  shared_future(const shared_future& o) noexcept : s_(o.s_) {
    if (s_) s_->ref();
  }
  shared_future(shared_future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  shared_future& operator=(const shared_future& o) noexcept {
    if (o.s_) o.s_->ref();
    reset();
    s_ = o.s_;
    return *this;
  }
  shared_future& operator=(shared_future&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~shared_future() { reset(); }

  // True while this copy refers to a result (not default-constructed nor moved from). Thread-safe
  // (own copy).
  bool valid() const noexcept { return s_ != nullptr; }
  // True once the value or the exception is there; never waits. Thread-safe (own copy).
  bool is_ready() const noexcept { return s_ && s_->is_done(); }
  // Waits (helping on a worker) until ready; does not throw the stored exception. Throws
  // invalid_future if not valid(). Thread-safe (own copy); blocks: a worker runs other tasks
  // meanwhile, another thread sleeps.
  void wait() const {
    check();
    core_detail::wait_shared(s_);
  }
  // Waits, then returns the value, or rethrows the stored exception (in every copy, every time).
  // The reference lives as long as some copy does. Returns nothing for shared_future<void>.
  // Thread-safe (own copy); waits as wait() does.
  decltype(auto) get() const {
    wait();
    if constexpr (std::is_void_v<T>) s_->source()->value_ref();
    else return static_cast<const T&>(s_->source()->value_ref());
  }
  decltype(auto) operator*() const { return get(); }

  // Returns a future of f(value) (f() for shared_future<void>; the value as a const T&), run as a
  // task once the result is ready, on the runtime of the future this one was shared from (the
  // caller's, for a promise's). Any number of successors, on any copies. A stored exception skips
  // f and is passed on. A continuation that returns a future<U> is unwrapped, as future::then
  // does. Does not consume this copy. Costs one record and a reference. Throws invalid_future if
  // not valid(). Thread-safe (own copy); never waits.
  template <class F>
  [[nodiscard]] auto then(F&& f) const {
    return chain(std::forward<F>(f), strategy::normal, /*timed=*/false);
  }
  // The same, started by `how` once ready, with its latency recorded (future::then(strategy, f)).
  template <class F>
  [[nodiscard]] auto then(strategy how, F&& f) const {
    return chain(std::forward<F>(f), how, /*timed=*/true);
  }

 private:
  template <class>
  friend class core_detail::future_base;
  friend struct core_detail::access;  // shared_state_of: co_await (co_task.hpp)
  shared_future(core_detail::adopt_t, core_detail::shared_state<T>* s) noexcept : s_(s) {}

  void check() const {
    if (!s_) [[unlikely]]
      throw invalid_future("heddle::shared_future: no state (default-constructed or moved from)");
  }
  void reset() noexcept {
    if (s_) std::exchange(s_, nullptr)->unref();
  }

  template <class F>
  auto chain(F&& f, strategy how, bool timed) const {
    check();
    using R = typename core_detail::shared_continuation_result<T, std::decay_t<F>>::type;
    using source = core_detail::shared_source<T>;
    core_detail::runtime_core* home = s_->home() ? s_->home() : core_detail::current_core();
    if constexpr (core_detail::is_future_v<R>) {
      using U = typename R::value_type;
      using C = core_detail::chain_state<U, source, std::decay_t<F>, /*Unwrap=*/true>;
      return start<U, C>(std::forward<F>(f), home, how, timed);
    } else {
      using C = core_detail::chain_state<R, source, std::decay_t<F>, /*Unwrap=*/false>;
      return start<R, C>(std::forward<F>(f), home, how, timed);
    }
  }
  template <class U, class C, class F>
  future<U> start(F&& f, core_detail::runtime_core* home, strategy how, bool timed) const {
    C* c = core_detail::make_record<C>(core_detail::shared_source<T>{s_}, std::forward<F>(f), home, how, timed);
    s_->ref();  // the successor's, dropped once it ran
    c->start();
    return future<U>(core_detail::adopt, c, home);
  }

  core_detail::shared_state<T>* s_ = nullptr;
};

template <class T>
shared_future<T> core_detail::future_base<T>::share() && {
  check();
  auto* s = make_record<shared_state<T>>(s_, home_);
  s_ = nullptr;
  s->start();
  return shared_future<T>(adopt, s);
}

}  // namespace heddle
