// SPDX-License-Identifier: Apache-2.0
// heddle::promise<T>: a future completed by code outside the task graph: another thread, a C
// callback from a driver, an MPI or GPU completion handler. Whatever waits on the future (a `then`
// successor with its strategy, a when_all, a forcing worker) starts when set_value is called.
//
// A promise is used by one thread at a time, but may be moved to any thread (or reached through a
// pointer handed to a C callback) and completed there. Errors are std::promise's: std::future_error
// with future_errc::promise_already_satisfied, future_already_retrieved or no_state; a promise
// destroyed unfulfilled leaves its future failing with future_errc::broken_promise. Two departures
// (docs/async.md, "Promises"): an exception from constructing the value in set_value becomes the
// future's error (the promise is satisfied) instead of reaching the caller, and
// set_exception(nullptr) throws std::invalid_argument.
//
// Successors of a promise run on the runtime given to its constructor, or else on the runtime
// current where `then` is called; complete the promise while that runtime lives.
#pragma once

#include <exception>
#include <future>
#include <utility>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

namespace async_detail {

// The state of a promise's future; never queued as a task.
template <class T>
class promise_state final : public core_detail::future_state<T> {
 public:
  promise_state() noexcept : core_detail::future_state<T>(&vtable) {}

 private:
  static void destroy(core_detail::future_state_base* b) noexcept {
    core_detail::free_record(static_cast<promise_state*>(b));
  }
  static constexpr core_detail::future_vtable vtable{core_detail::not_a_task, nullptr, &destroy};
};

}  // namespace async_detail

template <class T>
class promise {
 public:
  // Every member: not thread-safe (one thread at a time per promise); any thread, a C callback's too.
  promise() : s_(core_detail::make_record<async_detail::promise_state<T>>()) {}
  // A promise whose future belongs to `rt`: its successors run there.
  explicit promise(runtime& rt) : promise() { home_ = core_detail::access::core_of(rt); }
  promise(promise&& o) noexcept
      : s_(std::exchange(o.s_, nullptr)),
        home_(o.home_),
        retrieved_(std::exchange(o.retrieved_, false)),
        satisfied_(std::exchange(o.satisfied_, false)) {}
  promise& operator=(promise&& o) noexcept {
    if (this != &o) {
      abandon();
      s_ = std::exchange(o.s_, nullptr);
      home_ = o.home_;
      retrieved_ = std::exchange(o.retrieved_, false);
      satisfied_ = std::exchange(o.satisfied_, false);
    }
    return *this;
  }
  promise(const promise&) = delete;
  promise& operator=(const promise&) = delete;
  ~promise() { abandon(); }

  bool valid() const noexcept { return s_ != nullptr; }

  // The future of this promise; once.
  // Not thread-safe; any thread.
  future<T> get_future() {
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    check();
    retrieved_ = true;
    future<T> f(core_detail::adopt, s_, home_);
    if (satisfied_) s_ = nullptr;  // already done: the future owns the record now
    return f;
  }

  // Completes the future with a value; its successors start from the calling thread.
  // Not thread-safe; any thread.
  template <class... A>
  void set_value(A&&... a) {
    claim();
    try {
      s_->set_value(std::forward<A>(a)...);
    } catch (...) {
      s_->set_error(std::current_exception());
    }
    publish();
  }
  // Completes the future with an error, as set_value.
  // Not thread-safe; any thread.
  void set_exception(std::exception_ptr e) {
    if (!e) throw std::invalid_argument("heddle::promise::set_exception: null exception_ptr");
    claim();
    s_->set_error(std::move(e));
    publish();
  }

 private:
  void check() const {
    if (!s_) throw std::future_error(std::future_errc::no_state);
  }
  void claim() {
    if (satisfied_) throw std::future_error(std::future_errc::promise_already_satisfied);
    check();
    satisfied_ = true;
  }
  // Hands the result to the future's side. Before get_future nobody can be attached: the state
  // just becomes done, still owned by the promise until get_future or destruction.
  void publish() noexcept {
    if (retrieved_) {
      std::exchange(s_, nullptr)->complete();  // the record belongs to the future now
    } else {
      s_->state.store(core_detail::future_state_base::done, std::memory_order_release);
    }
  }
  void abandon() noexcept {
    if (!s_) return;
    async_detail::promise_state<T>* s = std::exchange(s_, nullptr);
    if (!retrieved_) {
      s->fvt()->destroy(s);  // nobody else ever saw it
    } else if (!satisfied_) {
      s->set_error(std::make_exception_ptr(std::future_error(std::future_errc::broken_promise)));
      s->complete();
    }
  }

  async_detail::promise_state<T>* s_;
  core_detail::runtime_core* home_ = nullptr;
  bool retrieved_ = false;
  bool satisfied_ = false;
};

}  // namespace heddle
