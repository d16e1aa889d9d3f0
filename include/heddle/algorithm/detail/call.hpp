// SPDX-License-Identifier: Apache-2.0
// How the algorithms call a user's reduction, scan and filter callables on values they own: moved in
// when the callable takes them so, else as lvalues, as the standard algorithms and oneTBB pass them.
#pragma once

#include <concepts>
#include <functional>
#include <type_traits>
#include <utility>

namespace heddle::core_detail {

// Whether f takes the arguments either as given (values moved in) or all as lvalues.
template <class F, class... A>
concept callable_moving_or_lvalues = std::invocable<const F&, A&&...> || std::invocable<const F&, A&...>;

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
// Calls f with the arguments as given when it takes them so: an accumulator that owns memory is
// moved along, never copied. Otherwise with every argument as an lvalue: std::reduce,
// std::inclusive_scan and oneTBB's reductions call their callables on lvalues, so a callable written
// [](auto& acc, auto& x) works there and must work here.
template <class F, class... A>
  requires callable_moving_or_lvalues<F, A...>
decltype(auto) call_moving_or_lvalues(const F& f, A&&... a) {
  if constexpr (std::is_invocable_v<const F&, A&&...>) return std::invoke(f, std::forward<A>(a)...);
  else return std::invoke(f, a...);  // named, the arguments are lvalues
}

// What call_moving_or_lvalues(f, a...) returns (A as std::declval gives it: T means an rvalue).
template <class F, class... A>
  requires callable_moving_or_lvalues<F, A...>
using moving_or_lvalues_result_t =
    decltype(call_moving_or_lvalues(std::declval<const F&>(), std::declval<A>()...));
// clang-format on

}  // namespace heddle::core_detail
