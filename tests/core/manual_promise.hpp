// SPDX-License-Identifier: Apache-2.0
// A future that test code completes by hand, from any thread: the core's own future record with
// no task behind it, as the async layer's promise is (the core tests cannot use the async layer).
// It lets a test decide exactly when, and on which thread, an input of a composition completes.
#pragma once

#include <exception>
#include <stdexcept>
#include <utility>

#include <heddle/heddle.hpp>

namespace heddle_test {

template <class T>
class manual_promise {
 public:
  manual_promise() : s_(heddle::core_detail::make_record<state>()) {}
  manual_promise(manual_promise&& o) noexcept : s_(std::exchange(o.s_, nullptr)), taken_(o.taken_) {}
  manual_promise& operator=(manual_promise&&) = delete;
  // An unfulfilled promise fails its future, so that nothing waits forever and nothing leaks.
  ~manual_promise() {
    if (!s_) return;
    if (taken_) set_exception(std::make_exception_ptr(std::logic_error("manual_promise dropped")));
    else heddle::core_detail::free_record(s_);
  }

  // Once, before set_*: the future belongs to no runtime, as a promise's.
  heddle::future<T> get_future() {
    if (taken_) throw std::logic_error("manual_promise: future already taken");
    taken_ = true;
    return {heddle::core_detail::adopt, s_};
  }

  template <class... A>
  void set_value(A&&... a) {
    s_->set_value(std::forward<A>(a)...);
    publish();
  }
  void set_exception(std::exception_ptr e) {
    s_->set_error(std::move(e));
    publish();
  }

 private:
  struct state final : heddle::core_detail::future_state<T> {
    state() noexcept : heddle::core_detail::future_state<T>(&vtable) {}
    static void destroy(heddle::core_detail::future_state_base* b) noexcept {
      heddle::core_detail::free_record(static_cast<state*>(b));
    }
    static constexpr heddle::core_detail::future_vtable vtable{heddle::core_detail::not_a_task, nullptr, &destroy};
  };

  void publish() {
    if (!taken_) throw std::logic_error("manual_promise: set before get_future");
    std::exchange(s_, nullptr)->complete();  // the record belongs to the future now
  }

  state* s_;
  bool taken_ = false;
};

}  // namespace heddle_test
