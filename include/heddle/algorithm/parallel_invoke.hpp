// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_invoke, as tbb::parallel_invoke: runs f1(), f2(), ... in parallel and returns when
// all have returned.
//
//   parallel_invoke(f1, f2, ...[, token])
//   parallel_invoke(heddle::runtime& rt, f1, f2, ...[, token])
//
// Each f is called once as an lvalue, with no arguments; results are discarded. A
// heddle::cancellation_token may come anywhere among the arguments (oneTBB takes its
// task_group_context last).
//
// Cost: one task record (a 64-byte block from the worker's magazine) per callable but the first,
// which the calling worker runs itself; then it helps until the others are done.
//
// Throws: the first exception thrown by a callable (callables not yet started are skipped; if the
// first callable threw, its exception is the one rethrown); heddle::task_cancelled if the token was
// cancelled before or during the call (some callables may then have run).
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one included: calls nest).
// The callables run concurrently, on the workers (and the caller, when it is one). Blocks until done: a worker of the
// runtime runs the pieces and other tasks meanwhile, any other thread sleeps.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "heddle/algorithm/detail/options.hpp"
#include "heddle/algorithm/detail/run.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace core_detail {

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class A>
concept invoke_argument = std::invocable<std::remove_reference_t<A>&> || token_option<A>;
// clang-format on

template <class... A>
constexpr std::size_t first_callable() {
  constexpr bool callable[] = {std::invocable<std::remove_reference_t<A>&>...};
  for (std::size_t i = 0; i < sizeof...(A); ++i)
    if (callable[i]) return i;
  return sizeof...(A);
}

template <class... A, std::size_t... I>
void run_invoke(runtime* rt, std::index_sequence<I...>, A&... a) {
  constexpr std::size_t first = first_callable<A...>();
  static_assert(first < sizeof...(A), "heddle::parallel_invoke: no callable to run");
  auto args = std::forward_as_tuple(a...);
  run_algorithm(rt, token_of(a...), "heddle::parallel_invoke", [&](task_group& g) {
    // The others as tasks, last first: the calling worker pops the second one first when it is done.
    (
        [&] {
          constexpr std::size_t i = sizeof...(A) - 1 - I;
          auto& f = std::get<i>(args);
          if constexpr (i != first && std::invocable<std::remove_reference_t<decltype(f)>&>)
            g.run([&f] { std::invoke(f); });
        }(),
        ...);
    if (!g.is_cancelling()) std::invoke(std::get<first>(args));
  });
}

}  // namespace core_detail

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class... A>
  requires(sizeof...(A) >= 1 && (core_detail::invoke_argument<A> && ...))
void parallel_invoke(A&&... a) {
  core_detail::run_invoke(nullptr, std::index_sequence_for<A...>{}, a...);
}
template <class... A>
  requires(sizeof...(A) >= 1 && (core_detail::invoke_argument<A> && ...))
void parallel_invoke(runtime& rt, A&&... a) {
  core_detail::run_invoke(&rt, std::index_sequence_for<A...>{}, a...);
}
// clang-format on

}  // namespace heddle
