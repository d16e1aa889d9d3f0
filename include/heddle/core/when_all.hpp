// SPDX-License-Identifier: Apache-2.0
// when_all: one future for the values of several. Waits for every input; if any failed, the result
// carries the exception of the first failed input (in argument order) and the values are dropped.
// when_all_ready: one future for the inputs themselves, ready once every input is, each keeping its
// own value or exception (the shape of std::experimental::when_all; cppcoro's name).
// The result belongs to the runtime of the first input that has one. No thread waits: each input
// gets a continuation slot, and the last input to complete finishes the result inline, on its
// completing thread. Cost: one record (plus a slot array for the vector forms); the inputs are
// consumed. Each throws invalid_future if an input has no state (the inputs are then left as
// they were).
#pragma once

#include <iterator>
#include <tuple>
#include <vector>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/inputs.hpp"
#include "heddle/core/detail/when_all_state.hpp"
#include "heddle/core/future.hpp"

namespace heddle {

// future<tuple<A, B, ...>> from future<A>, future<B>, ... (a future<void> gives std::monostate).
// Thread-safe (the inputs are the caller's, as any future's calls); never waits.
template <class... T>
[[nodiscard]] future<std::tuple<core_detail::slot_value_t<T>...>> when_all(future<T>&&... inputs) {
  if (!(inputs.valid() && ...)) throw invalid_future("heddle::when_all: an input future has no state");
  using S = core_detail::when_all_state<T...>;
  core_detail::runtime_core* home = nullptr;
  ((home = home ? home : core_detail::access::home_of(inputs)), ...);
  return {core_detail::adopt, core_detail::make_record<S>(inputs...), home};
}

// future<vector<T>> from a vector of futures, in order. Thread-safe (the inputs are the caller's);
// never waits.
template <class T>
[[nodiscard]] future<std::vector<core_detail::slot_value_t<T>>> when_all(std::vector<future<T>>&& inputs) {
  core_detail::check_inputs(inputs, "heddle::when_all: an input future has no state");
  core_detail::runtime_core* home = core_detail::first_home(inputs);
  using S = core_detail::when_all_range_state<T>;
  return {core_detail::adopt, core_detail::make_record<S>(inputs), home};
}

// The same over an iterator range of futures, which are moved from (into a vector, before the
// inputs are checked). Thread-safe (the inputs are the caller's); never waits.
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <std::input_iterator It>
  requires core_detail::is_future_v<std::iter_value_t<It>>
[[nodiscard]] auto when_all(It first, It last) {
  return when_all(std::vector<std::iter_value_t<It>>(std::make_move_iterator(first), std::make_move_iterator(last)));
}
// clang-format on

// future<vector<future<T>>>: the inputs, in order, once every one is ready; never fails itself.
// An empty vector gives a ready future of an empty vector. Thread-safe (the inputs are the
// caller's); never waits.
template <class T>
[[nodiscard]] future<std::vector<future<T>>> when_all_ready(std::vector<future<T>>&& inputs) {
  core_detail::check_inputs(inputs, "heddle::when_all_ready: an input future has no state");
  core_detail::runtime_core* home = core_detail::first_home(inputs);
  using S = core_detail::when_all_ready_state<T>;
  return {core_detail::adopt, core_detail::make_record<S>(inputs), home};
}

// The same over an iterator range of futures, which are moved from (into a vector, before the
// inputs are checked). Thread-safe (the inputs are the caller's); never waits.
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <std::input_iterator It>
  requires core_detail::is_future_v<std::iter_value_t<It>>
[[nodiscard]] auto when_all_ready(It first, It last) {
  return when_all_ready(
      std::vector<std::iter_value_t<It>>(std::make_move_iterator(first), std::make_move_iterator(last)));
}
// clang-format on

}  // namespace heddle
