// heddle::parallel_for: f(i) for every i in [first, last), by recursive halving: each split pushes
// the upper half as a task and keeps the lower half, so idle workers steal the largest pieces.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "heddle/algorithm/detail/run.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace core_detail {

// Sizes and midpoints are computed in the unsigned type of the same width, so a range wider than
// the signed index type can count (say [INT_MIN, INT_MAX)) splits without overflow.
template <class I, class F>
void split_and_run(task_group& g, I lo, I hi, std::make_unsigned_t<I> grain, const F& f) {
  using U = std::make_unsigned_t<I>;
  while (static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo)) > grain) {
    if (g.is_cancelling()) return;
    const U half = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo)) / 2;
    const I mid = static_cast<I>(static_cast<U>(lo) + half);
    g.run([&g, mid, hi, grain, &f] { split_and_run(g, mid, hi, grain, f); });
    hi = mid;
  }
  for (I i = lo; i != hi && !g.is_cancelling(); ++i) f(i);
}

HEDDLE_EXPORT unsigned current_concurrency();

}  // namespace core_detail

// Calls f(i) for each i in [first, last) in parallel and returns when all calls have returned.
// `grain`: the most iterations one task runs; 0 picks about 8 pieces per worker. The first
// exception thrown by f stops further pieces from starting and is rethrown here.
template <std::integral I, std::integral J, class F>
void parallel_for(I first, J last, F&& f, std::size_t grain = 0) {
  using index = std::common_type_t<I, J>;
  using U = std::make_unsigned_t<index>;
  const index lo = static_cast<index>(first), hi = static_cast<index>(last);
  if (!(lo < hi)) return;
  const U n = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  if (grain == 0) grain = std::max<std::size_t>(1, n / (8 * std::size_t{core_detail::current_concurrency()}));
  const U g = static_cast<U>(std::min<std::uintmax_t>(grain, n));
  core_detail::run_algorithm(nullptr, {}, "heddle::parallel_for",
                             [&](task_group& group) { core_detail::split_and_run(group, lo, hi, g, f); });
}

}  // namespace heddle
