// heddle::parallel_for: f(i) for every i in [first, last), by recursive halving: each split pushes
// the upper half as a task and keeps the lower half, so idle workers steal the largest pieces.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <type_traits>

#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace detail {

template <class I, class F>
void split_and_run(task_group& g, I lo, I hi, I grain, const F& f) {
  while (hi - lo > grain) {
    if (g.is_canceling()) return;
    I mid = lo + (hi - lo) / 2;
    g.run([&g, mid, hi, grain, &f] { split_and_run(g, mid, hi, grain, f); });
    hi = mid;
  }
  for (I i = lo; i < hi && !g.is_canceling(); ++i) f(i);
}

unsigned current_concurrency() noexcept;

}  // namespace detail

// Calls f(i) for each i in [first, last) in parallel and returns when all calls have returned.
// `grain`: the most iterations one task runs; 0 picks about 8 pieces per worker. The first
// exception thrown by f stops further pieces from starting and is rethrown here.
template <std::integral I, std::integral J, class F>
void parallel_for(I first, J last, F&& f, std::size_t grain = 0) {
  using index = std::common_type_t<I, J>;
  const index lo = static_cast<index>(first), hi = static_cast<index>(last);
  if (!(lo < hi)) return;
  const auto n = static_cast<std::size_t>(hi - lo);
  if (grain == 0) grain = std::max<std::size_t>(1, n / (8 * std::size_t{detail::current_concurrency()}));
  const auto g = static_cast<index>(std::min(grain, n));
  task_group group;
  if (detail::current_worker) {
    detail::split_and_run(group, lo, hi, g, f);
  } else {
    // From a thread outside the runtime all pieces go to the workers; this thread only sleeps.
    group.run([&] { detail::split_and_run(group, lo, hi, g, f); });
  }
  group.wait();
}

}  // namespace heddle
