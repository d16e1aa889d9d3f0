// SPDX-License-Identifier: Apache-2.0
// Futures that are ready from the start: make_ready_future and make_exceptional_future (the
// Concurrency TS's and HPX's spelling).
//
// Cost: one small record from the calling thread's magazine (no task, no allocator call, no
// runtime needed: such a future belongs to no runtime). Forcing one returns at once; `then` on it
// starts the successor at once on the caller's runtime (the calling worker's, the default one
// elsewhere), as for a promise's future.
#pragma once

#include <exception>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/ready_state.hpp"
#include "heddle/core/future.hpp"

namespace heddle {

// A future holding `value` (decayed: make_ready_future(x) for an int lvalue gives future<int>).
// Throws what copying or moving the value throws. Thread-safe.
template <class T>
[[nodiscard]] future<std::decay_t<T>> make_ready_future(T&& value) {
  using V = std::decay_t<T>;
  return {core_detail::adopt, core_detail::ready_state<V>::with_value(std::forward<T>(value))};
}

// A ready future<void>. Thread-safe.
[[nodiscard]] inline future<void> make_ready_future() {
  return {core_detail::adopt, core_detail::ready_state<void>::with_value()};
}

// A future<T> holding the exception `e` (an std::exception_ptr, or an exception object that is
// stored as std::make_exception_ptr(e) would). Forcing it rethrows; successors are skipped and the
// exception is passed on. Throws std::invalid_argument for a null exception_ptr. Thread-safe.
template <class T, class E>
[[nodiscard]] future<T> make_exceptional_future(E&& e) {
  std::exception_ptr p;
  if constexpr (std::is_same_v<std::decay_t<E>, std::exception_ptr>) {
    if (!e) throw std::invalid_argument("heddle::make_exceptional_future: null exception_ptr");
    p = std::forward<E>(e);
  } else {
    p = std::make_exception_ptr(std::forward<E>(e));
  }
  return {core_detail::adopt, core_detail::ready_state<T>::with_error(std::move(p))};
}

}  // namespace heddle
