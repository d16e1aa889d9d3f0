// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_for_each, as tbb::parallel_for_each: f(*it) for every element of
// [first, last) (or of a container), in parallel.
//
//   parallel_for_each(first, last, f[, token])
//   parallel_for_each(container, f[, token])
//   parallel_for_each(heddle::runtime& rt, first, last, f[, token])    and  (rt, container, f[, token])
//
// Random-access iterators: [first, last) is a blocked_range of iterators cut by auto_partitioner,
// exactly as parallel_for(range, body): no walk, a task per piece (partitioner.hpp).
// Forward iterators (std::list, std::forward_list, std::set...): the calling worker walks the
// sequence once and spawns a task per block of consecutive elements, blocks of 1, 2, 4, 8, then 16
// elements (a few heavy items still spread over every worker; a long list of light ones costs a task
// record per 16 elements). The walk is serial: pointer chasing at memory latency, overlapped with the
// tasks it has already spawned. Single-pass input iterators are not accepted (oneTBB copies their
// items into its tasks; heddle asks for a forward iterator). oneTBB's feeder (bodies that add work)
// is not provided.
//
// Throws: the first exception thrown by f (blocks not yet started are skipped; for forward
// iterators, the walk stops); heddle::task_cancelled if the token was cancelled before or during the
// call.
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one included: calls nest).
// f is called concurrently, on the workers (and the caller, when it is one). Blocks until done: a worker of the runtime
// runs the pieces and other tasks meanwhile, any other thread sleeps.
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>
#include <ranges>

#include "heddle/algorithm/blocked_range.hpp"
#include "heddle/algorithm/detail/options.hpp"
#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/parallel_for.hpp"
#include "heddle/algorithm/partitioner.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace core_detail {

inline constexpr std::size_t for_each_max_block = 16;

template <std::forward_iterator It, class F, class... O>
void run_for_each(runtime* rt, It first, It last, const F& f, const O&... options) {
  const cancellation_token token = token_of(options...);
  if constexpr (std::random_access_iterator<It>) {
    auto body = [&f](const blocked_range<It>& r) {
      for (It it = r.begin(); it != r.end(); ++it) f(*it);
    };
    run_for<auto_partitioner>(rt, token, "heddle::parallel_for_each", blocked_range<It>(first, last), body);
  } else {
    if (first == last && !token.cancelled()) return;
    run_algorithm(rt, token, "heddle::parallel_for_each", [&](task_group& g) {
      std::size_t block = 1;
      for (It it = first; it != last && !g.is_cancelling();) {
        const It begin = it;
        std::size_t k = 0;
        for (; k < block && it != last; ++k) ++it;
        g.run([&g, begin, k, &f] {
          It x = begin;
          for (std::size_t j = 0; j < k && !g.is_cancelling(); ++j, ++x) f(*x);
        });
        if (block < for_each_max_block) block *= 2;
      }
    });
  }
}

}  // namespace core_detail

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <std::forward_iterator It, class F, core_detail::token_option... O>
  requires std::invocable<const F&, std::iter_reference_t<It>>
void parallel_for_each(It first, It last, const F& f, const O&... options) {
  core_detail::run_for_each(nullptr, first, last, f, options...);
}
template <std::forward_iterator It, class F, core_detail::token_option... O>
  requires std::invocable<const F&, std::iter_reference_t<It>>
void parallel_for_each(runtime& rt, It first, It last, const F& f, const O&... options) {
  core_detail::run_for_each(&rt, first, last, f, options...);
}
template <std::ranges::forward_range C, class F, core_detail::token_option... O>
  requires std::ranges::common_range<C> && std::invocable<const F&, std::ranges::range_reference_t<C>>
void parallel_for_each(C&& c, const F& f, const O&... options) {
  core_detail::run_for_each(nullptr, std::ranges::begin(c), std::ranges::end(c), f, options...);
}
template <std::ranges::forward_range C, class F, core_detail::token_option... O>
  requires std::ranges::common_range<C> && std::invocable<const F&, std::ranges::range_reference_t<C>>
void parallel_for_each(runtime& rt, C&& c, const F& f, const O&... options) {
  core_detail::run_for_each(&rt, std::ranges::begin(c), std::ranges::end(c), f, options...);
}
// clang-format on

}  // namespace heddle
