// SPDX-License-Identifier: Apache-2.0
// when_any: one future that is ready as soon as the first of several inputs is, with the index of
// that input and every input future handed back (std::experimental::when_any's shape, over a
// vector or an iterator range).
//
// The first completion wins (one atomic exchange); the others keep their own futures, which the
// caller may force, chain or drop like any. No thread waits: each input gets a continuation slot,
// and the winner's completing thread finishes the result inline, taking the slots off the inputs
// still pending. The result belongs to the runtime of the first input that has one.
// Cost: one record and a slot array; the inputs are consumed. Throws invalid_future if an input
// has no state (the inputs are then left as they were).
#pragma once

#include <cstddef>
#include <iterator>
#include <vector>

#include "heddle/core/detail/inputs.hpp"
#include "heddle/core/detail/when_any_state.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/ready_future.hpp"

namespace heddle {

template <class Sequence>
struct when_any_result {
  std::size_t index = static_cast<std::size_t>(-1);  // the first input found ready
  Sequence futures;                                  // every input, in order
};

// Ready once any input is; `index` is the first input found ready (when several already are when
// when_any is called, the lowest index). An empty vector gives a ready result with
// index == std::size_t(-1), as std::experimental::when_any does. Thread-safe (the inputs are the
// caller's, as any future's calls); never waits.
template <class T>
[[nodiscard]] future<when_any_result<std::vector<future<T>>>> when_any(std::vector<future<T>>&& inputs) {
  using R = when_any_result<std::vector<future<T>>>;
  core_detail::check_inputs(inputs, "heddle::when_any: an input future has no state");
  if (inputs.empty()) return make_ready_future(R{});
  core_detail::runtime_core* home = core_detail::first_home(inputs);
  auto* s = core_detail::make_record<core_detail::when_any_state<T, R>>(inputs);
  s->start();
  return {core_detail::adopt, s, home};
}

// The same over an iterator range of futures, which are moved from (into a vector, before the
// inputs are checked). Thread-safe (the inputs are the caller's); never waits.
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <std::input_iterator It>
  requires core_detail::is_future_v<std::iter_value_t<It>>
[[nodiscard]] auto when_any(It first, It last) {
  return when_any(std::vector<std::iter_value_t<It>>(std::make_move_iterator(first), std::make_move_iterator(last)));
}
// clang-format on

}  // namespace heddle
