// SPDX-License-Identifier: Apache-2.0
// How each public async call (io.hpp, timer.hpp, process.hpp, mpi.hpp) becomes a future: its
// compiled start function (async_detail::read, start_timer, ...) makes the operation's record for a
// runtime, and the future adopts that record with the runtime as its home, where successors run.
// The start function is a template argument, so each call inlines to the direct call it replaces.
#pragma once

#include <type_traits>
#include <utility>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle::async_detail {

// The future of a start function's record: Start returns core_detail::future_state<T>*.
template <class State>
struct future_of_state;
template <class T>
struct future_of_state<core_detail::future_state<T>*> {
  using type = future<T>;
};
template <auto Start, class... A>
using started_future =
    typename future_of_state<std::invoke_result_t<decltype(Start), core_detail::runtime_core*, A...>>::type;

// Starts the operation on `core`.
template <auto Start, class... A>
inline started_future<Start, A&&...> start_on(core_detail::runtime_core* core, A&&... args) {
  return {core_detail::adopt, Start(core, std::forward<A>(args)...), core};
}

// Starts the operation on `rt`.
template <auto Start, class... A>
inline started_future<Start, A&&...> start_on(runtime& rt, A&&... args) {
  return start_on<Start>(core_detail::access::core_of(rt), std::forward<A>(args)...);
}

// Starts the operation on the calling thread's runtime (core_detail::current_core(): its worker's,
// the one it runs a successor for or has entered, else the default runtime, started on first use).
template <auto Start, class... A>
inline started_future<Start, A&&...> start_here(A&&... args) {
  return start_on<Start>(core_detail::current_core(), std::forward<A>(args)...);
}

}  // namespace heddle::async_detail
