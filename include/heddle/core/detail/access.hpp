// SPDX-License-Identifier: Apache-2.0
// What the core's public classes hold for the layers above and keep from users: a future's state
// and runtime, a shared future's state, a runtime's scheduler, a token's cancellation state. Each
// class befriends `access`; code outside the core reaches these only through it.
#pragma once

#include <utility>

#include "heddle/core/cancellation.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle::core_detail {

struct access {
  // Takes `f`'s state, leaving `f` empty (not valid): the caller now holds the reference `f` held
  // and must hand it on (adopt it into another future, attach to it) or release() it. Null for an
  // empty future.
  template <class T>
  static future_state<T>* state_of(future<T>&& f) noexcept {
    return std::exchange(static_cast<future_base<T>&>(f).s_, nullptr);
  }
  // `f`'s state, left in `f`: for a record that keeps the future and attaches to its state (the
  // attachment must end before the future is handed back: when_any_state). Null for an empty future.
  template <class T>
  static future_state<T>* peek(const future<T>& f) noexcept {
    return static_cast<const future_base<T>&>(f).s_;
  }
  // The runtime `f` belongs to (where its successors go), or nullptr (a promise's future).
  template <class T>
  static runtime_core* home_of(const future<T>& f) noexcept {
    return static_cast<const future_base<T>&>(f).home_;
  }
  // `f`'s shared state, left in `f`; null for an empty shared_future.
  template <class T>
  static shared_state<T>* shared_state_of(const shared_future<T>& f) noexcept {
    return f.s_;
  }
  // `rt`'s scheduler, for the layers' records and engines; valid as long as `rt`.
  static runtime_core* core_of(const runtime& rt) noexcept { return rt.core_.get(); }
  // Where an operation started with `t` registers its cancel hook; nullptr for a token that can
  // never be cancelled.
  static cancel_state* state_of(const cancellation_token& t) noexcept { return t.state_; }
};

}  // namespace heddle::core_detail
