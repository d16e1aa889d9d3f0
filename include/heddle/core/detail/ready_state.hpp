// SPDX-License-Identifier: Apache-2.0
// The record behind make_ready_future and make_exceptional_future: a result that is there from
// the start. Never queued and never run; freed by the future that owns it.
#pragma once

#include <exception>
#include <utility>

#include "heddle/core/detail/future_state.hpp"

namespace heddle::core_detail {

template <class T>
class ready_state final : public future_state<T> {
 public:
  ready_state() noexcept : future_state<T>(&vtable) {}

  // The record is not shared yet: a plain store publishes it with the future that carries it.
  template <class... A>
  static ready_state* with_value(A&&... a) {
    auto* s = make_record<ready_state>();
    try {
      s->set_value(std::forward<A>(a)...);
    } catch (...) {
      free_record(s);
      throw;
    }
    s->state.store(future_state_base::done, std::memory_order_relaxed);
    return s;
  }
  static ready_state* with_error(std::exception_ptr e) {
    auto* s = make_record<ready_state>();
    s->set_error(std::move(e));
    s->state.store(future_state_base::done, std::memory_order_relaxed);
    return s;
  }

 private:
  static void destroy(future_state_base* b) noexcept { free_record(static_cast<ready_state*>(b)); }
  static constexpr future_vtable vtable{not_a_task, nullptr, &destroy};
};

}  // namespace heddle::core_detail
