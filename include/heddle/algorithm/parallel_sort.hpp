// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_sort and heddle::parallel_stable_sort, spelled as oneTBB's tbb::parallel_sort.
//
//   heddle::parallel_sort(v.begin(), v.end());                      // std::less<>
//   heddle::parallel_sort(v.begin(), v.end(), std::greater<>{});
//   heddle::parallel_sort(v);                                        // a random-access range
//   heddle::parallel_stable_sort(v.begin(), v.end(), by_key, token);
//   heddle::parallel_sort(rt, v.begin(), v.end());                   // on runtime rt
//
// Every form takes, last, an optional heddle::cancellation_token; the forms with a runtime first run
// there, the others on the calling worker's runtime (the default runtime from any other thread).
// Called from outside the runtime, the work runs on its workers while the caller sleeps.
//
// Requirements (as for std::sort): random-access iterators over move-constructible, move-assignable,
// swappable elements; `comp` a strict weak ordering, called concurrently from several threads
// through a const reference (it is never copied), always on lvalues (as std::sort calls it: a
// comparator written [](auto& a, auto& b) or taking its arguments by value is accepted).
//
// Errors: the first exception thrown by `comp` (or by an element's move) stops the rest of the work
// and is rethrown once every task has stopped; heddle::task_cancelled when the token was cancelled
// before or during the call. After either, the range holds valid elements in an unspecified order,
// and — as after std::sort or std::stable_sort that throws — not necessarily the original multiset:
// an element being moved when the exception struck may be left moved-from. Nothing leaks.
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one included: calls nest).
// comp is called concurrently, on the workers (and the caller, when it is one). Blocks until done: a worker of the
// runtime runs the pieces and other tasks meanwhile, any other thread sleeps.
#pragma once

#include <functional>
#include <iterator>
#include <ranges>

#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/detail/sort.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

namespace core_detail {
// A comparator for the elements of It, called on lvalues as std::sort calls it (and, like
// std::ranges::sort's, on the value type's lvalues too); a cancellation_token in its place is the
// form without a comparator.
template <class C, class It>
concept sort_comparator = !std::is_same_v<std::remove_cvref_t<C>, cancellation_token> &&
                          std::indirect_strict_weak_order<const C&, It>;
}  // namespace core_detail

// Sorts [first, last) by `comp` (not stable). A parallel quicksort: the piece's pivot is the median
// of three medians of three (oneTBB's), partitions are Hoare's (equal keys split evenly), the larger
// side of each partition becomes a task; pieces of at most max(2048, n / (16 × workers)) elements
// are std::sort-ed. An input that is already sorted is recognised first, by a parallel scan that
// stops at the first descent. Cost: O(n log n) comparisons on every input — after 2·log2(n) levels
// of partitions a piece goes to std::sort, whose introsort bounds it — with a critical path of
// about 2n comparisons (the partitions at the top). Inputs of at most 2048 elements are sorted on
// one thread. No memory beyond the tasks' records. Thread-safe; blocks until done.
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <std::random_access_iterator It, core_detail::sort_comparator<It> Compare, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_sort(runtime& rt, It first, It last, const Compare& comp, const Options&... options) {
  if (!(first < last)) return;
  core_detail::run_algorithm(&rt, core_detail::option_or(cancellation_token{}, options...), "heddle::parallel_sort",
                             [&](task_group& g) { core_detail::parallel_sort_root(g, first, last, comp); });
}
template <std::random_access_iterator It, core_detail::sort_comparator<It> Compare, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_sort(It first, It last, const Compare& comp, const Options&... options) {
  if (!(first < last)) return;
  core_detail::run_algorithm(nullptr, core_detail::option_or(cancellation_token{}, options...),
                             "heddle::parallel_sort",
                             [&](task_group& g) { core_detail::parallel_sort_root(g, first, last, comp); });
}
template <std::random_access_iterator It, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_sort(runtime& rt, It first, It last, const Options&... options) {
  heddle::parallel_sort(rt, first, last, std::less<>{}, options...);
}
template <std::random_access_iterator It, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_sort(It first, It last, const Options&... options) {
  heddle::parallel_sort(first, last, std::less<>{}, options...);
}
// The whole of a random-access range (a std::vector, a std::span, an array), as oneTBB's
// parallel_sort(Range&) and parallel_sort(Range&, comp). Thread-safe; blocks until done.
template <std::ranges::random_access_range R, class... Rest>
void parallel_sort(R&& range, const Rest&... rest) {
  heddle::parallel_sort(std::ranges::begin(range), std::ranges::end(range), rest...);
}
template <std::ranges::random_access_range R, class... Rest>
void parallel_sort(runtime& rt, R&& range, const Rest&... rest) {
  heddle::parallel_sort(rt, std::ranges::begin(range), std::ranges::end(range), rest...);
}

// Sorts [first, last) by `comp`, keeping equal elements in their original order. A parallel merge
// sort: about 8 pieces per worker (an odd number of halvings, each piece at least 2048 elements) are
// std::stable_sort-ed in parallel, then merged pairwise up the tree, each merge itself split in
// parallel by binary search. Extra memory: a buffer of n elements (allocated for the call, freed
// before it returns), besides what std::stable_sort takes for each piece; if the buffer cannot be
// allocated, or the runtime has one worker, or n <= 2048, it is std::stable_sort on one thread.
// Cost: O(n log n) comparisons and 2 moves per element per level of merging (log2(pieces) levels),
// on any input. The elements' moves must be noexcept (checked at compile time). Thread-safe; blocks
// until done.
template <std::random_access_iterator It, core_detail::sort_comparator<It> Compare, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_stable_sort(runtime& rt, It first, It last, const Compare& comp, const Options&... options) {
  if (!(first < last)) return;
  core_detail::run_algorithm(&rt, core_detail::option_or(cancellation_token{}, options...),
                             "heddle::parallel_stable_sort",
                             [&](task_group& g) { core_detail::parallel_stable_sort_root(g, first, last, comp); });
}
template <std::random_access_iterator It, core_detail::sort_comparator<It> Compare, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_stable_sort(It first, It last, const Compare& comp, const Options&... options) {
  if (!(first < last)) return;
  core_detail::run_algorithm(nullptr, core_detail::option_or(cancellation_token{}, options...),
                             "heddle::parallel_stable_sort",
                             [&](task_group& g) { core_detail::parallel_stable_sort_root(g, first, last, comp); });
}
template <std::random_access_iterator It, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_stable_sort(runtime& rt, It first, It last, const Options&... options) {
  heddle::parallel_stable_sort(rt, first, last, std::less<>{}, options...);
}
template <std::random_access_iterator It, class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_stable_sort(It first, It last, const Options&... options) {
  heddle::parallel_stable_sort(first, last, std::less<>{}, options...);
}
// clang-format on

}  // namespace heddle
