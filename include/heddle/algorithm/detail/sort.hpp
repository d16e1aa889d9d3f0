// SPDX-License-Identifier: Apache-2.0
// The pieces of heddle::parallel_sort (a parallel quicksort) and heddle::parallel_stable_sort (a
// parallel merge sort through a buffer): pivots, partitions, merges and the task trees.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "heddle/algorithm/parallel_for.hpp"  // current_concurrency()
#include "heddle/core/task_group.hpp"

namespace heddle::core_detail {

// Pieces of at most this many elements are sorted by std::sort / std::stable_sort on one thread:
// below it a task costs more than it saves. Inputs up to this size are sorted serially.
inline constexpr std::size_t sort_serial_cutoff = 2048;
// A merge of at most this many elements is one std::merge.
inline constexpr std::size_t merge_serial_cutoff = 8192;

// The comparator as std::sort takes it (by value): a pointer to the caller's, so a comparator that
// is costly to copy is never copied, and every task calls the same object (as oneTBB does).
// It always hands the comparator lvalues, as the standard algorithms do: the merges read their
// runs through move iterators, whose rvalues a comparator written [](auto& a, auto& b) does not
// take, and one taking its arguments by value would move the elements out of the runs.
template <class C>
struct comp_ref {
  const C* c;
  template <class A, class B>
  bool operator()(A&& a, B&& b) const {
    return (*c)(a, b);  // a and b are named: lvalues, whatever the iterators' references are
  }
};

template <class It, class C>
It median_of_3(It a, It b, It c, const C& comp) {
  return comp(*a, *b) ? (comp(*b, *c) ? b : (comp(*a, *c) ? c : a)) : (comp(*a, *c) ? a : (comp(*b, *c) ? c : b));
}

// oneTBB's pivot: the median of three medians of three, spread over the piece. Sorted, reversed and
// organ-pipe inputs get a pivot near the middle.
template <class It, class C>
It pseudo_median_of_nine(It lo, std::size_t n, const C& comp) {
  const auto s = static_cast<std::ptrdiff_t>(n / 8);
  return median_of_3(median_of_3(lo, lo + s, lo + 2 * s, comp), median_of_3(lo + 3 * s, lo + 4 * s, lo + 5 * s, comp),
                     median_of_3(lo + 6 * s, lo + 7 * s, lo + static_cast<std::ptrdiff_t>(n - 1), comp), comp);
}

// Hoare's partition around the pivot at *lo (libstdc++'s unguarded one). Both scans stop at
// elements equal to the pivot, so runs of equal keys split in the middle rather than to one side.
// The other two medians of the ninther are on each side of the pivot's value inside (lo, hi), so
// neither scan needs a bound check. Returns cut with [lo, cut) <= pivot <= [cut, hi), both non-empty.
template <class It, class C>
It partition_around_first(It lo, It hi, const C& comp) {
  It l = lo + 1, r = hi;
  for (;;) {
    while (comp(*l, *lo)) ++l;
    --r;
    while (comp(*lo, *r)) --r;
    if (!(l < r)) return l;
    std::iter_swap(l, r);
    ++l;
  }
}

// Sorts [lo, hi): partitions, hands the larger side to a task (thieves take the largest pieces) and
// goes on with the smaller. A piece of at most `leaf` elements goes to std::sort; so does one whose
// `depth` budget ran out (bad pivots at every level: std::sort's introsort bounds it at n log n).
template <class It, class C>
void quicksort_node(task_group& g, It lo, It hi, const C* comp, std::size_t leaf, int depth) {
  const comp_ref<C> cmp{comp};
  while (static_cast<std::size_t>(hi - lo) > leaf) {
    if (g.is_cancelling()) return;
    if (depth-- == 0) return std::sort(lo, hi, cmp);
    std::iter_swap(lo, pseudo_median_of_nine(lo, static_cast<std::size_t>(hi - lo), cmp));
    const It cut = partition_around_first(lo, hi, cmp);
    if (cut - lo < hi - cut) {
      g.run([&g, cut, hi, comp, leaf, depth] { quicksort_node(g, cut, hi, comp, leaf, depth); });
      hi = cut;
    } else {
      g.run([&g, lo, cut, comp, leaf, depth] { quicksort_node(g, lo, cut, comp, leaf, depth); });
      lo = cut;
    }
  }
  if (!g.is_cancelling()) std::sort(lo, hi, cmp);
}

inline int floor_log2(std::size_t n) noexcept {
  int k = 0;
  while (n >>= 1) ++k;
  return k;
}

// Whether [first, last) is sorted, checked in parallel pieces that stop as soon as any piece finds
// a descent (oneTBB's pre-test). A random input costs a few comparisons: the first piece is checked
// on the calling thread before any task is made.
template <class It, class C>
bool parallel_is_sorted(task_group& g, It first, It last, const C& comp) {
  const std::size_t n = static_cast<std::size_t>(last - first);
  const std::size_t probe = std::min<std::size_t>(n, 64);
  if (std::is_sorted_until(first, first + static_cast<std::ptrdiff_t>(probe), comp) !=
      first + static_cast<std::ptrdiff_t>(probe))
    return false;
  if (probe == n) return true;
  std::atomic<bool> descent{false};
  const std::size_t piece = std::max<std::size_t>(sort_serial_cutoff, n / (4 * std::size_t{current_concurrency()}));
  task_group check;
  // [probe - 1, n): each piece also compares its first element with the previous piece's last.
  for (std::size_t lo = probe - 1; lo + 1 < n; lo += piece) {
    const std::size_t hi = std::min(n, lo + piece + 1);
    check.run([&, lo, hi] {
      constexpr std::size_t step = 1024;  // how often a piece looks whether another found a descent
      for (std::size_t a = lo; a + 1 < hi; a += step) {
        if (descent.load(std::memory_order_relaxed) || g.is_cancelling()) return;
        const It b = first + static_cast<std::ptrdiff_t>(a),
                 e = first + static_cast<std::ptrdiff_t>(std::min(hi, a + step + 1));
        if (std::is_sorted_until(b, e, comp) != e) return descent.store(true, std::memory_order_relaxed);
      }
    });
  }
  check.wait();
  return !descent.load(std::memory_order_relaxed);
}

template <class It, class C>
void parallel_sort_root(task_group& g, It first, It last, const C& comp) {
  const std::size_t n = static_cast<std::size_t>(last - first);
  const comp_ref<C> cmp{&comp};
  if (n <= sort_serial_cutoff) return std::sort(first, last, cmp);
  if (parallel_is_sorted(g, first, last, cmp)) return;
  // About 16 leaves per worker: enough to balance the uneven halves that quicksort makes.
  const std::size_t leaf = std::max(sort_serial_cutoff, n / (16 * std::size_t{current_concurrency()}));
  quicksort_node(g, first, last, &comp, leaf, 2 * floor_log2(n));
}

// ---- stable sort ---------------------------------------------------------------------------------

// Merges the sorted [a, ae) and [b, be) into out by moves, [a, ae)'s elements first among equal
// ones. Long merges split in two at the larger run's middle (binary search in the other) and the
// halves run in parallel; `out` must hold constructed objects (they are move-assigned).
template <class In, class Out, class C>
void parallel_merge(task_group& g, In a, In ae, In b, In be, Out out, const C& cmp, std::size_t cutoff) {
  task_group pieces;
  while (static_cast<std::size_t>((ae - a) + (be - b)) > cutoff) {
    if (g.is_cancelling()) break;
    In am, bm;
    if (ae - a >= be - b) {
      am = a + (ae - a) / 2;
      bm = std::lower_bound(b, be, *am, cmp);  // b's elements equal to *am go after it
    } else {
      bm = b + (be - b) / 2;
      am = std::upper_bound(a, ae, *bm, cmp);  // a's elements equal to *bm go before it
    }
    const Out om = out + ((am - a) + (bm - b));
    pieces.run([&g, am, ae, bm, be, om, &cmp, cutoff] { parallel_merge(g, am, ae, bm, be, om, cmp, cutoff); });
    ae = am;
    be = bm;
  }
  if (!g.is_cancelling())
    std::merge(std::make_move_iterator(a), std::make_move_iterator(ae), std::make_move_iterator(b),
               std::make_move_iterator(be), out, cmp);
  pieces.wait();
}

// The merge sort's tree has `levels` levels below the root (an odd number), so that every leaf
// leaves its sorted run in the buffer and the root's merge brings everything back: a leaf
// std::stable_sorts its piece in place and move-constructs it into the buffer (the only place
// buffer objects are constructed), and each level above merges its two children's runs into the
// other array. The buffer's objects are destroyed by the root once the tree is done (or stopped).
template <class It, class T, class C>
struct stable_sort_tree {
  task_group& g;
  It first;
  T* buffer;
  const C& cmp;
  int levels;
  std::size_t merge_cutoff;
  std::vector<std::pair<std::size_t, std::size_t>> built;  // per leaf: the buffer slice it constructed

  // The first exception cancels `g` at once, so that the other subtrees stop at their next check
  // rather than when it reaches the root.
  void node(std::size_t lo, std::size_t hi, int level, std::size_t leaf) {
    try {
      sort_piece(lo, hi, level, leaf);
    } catch (...) {
      g.cancel();
      throw;
    }
  }

  void sort_piece(std::size_t lo, std::size_t hi, int level, std::size_t leaf) {
    const It x = first;
    T* const z = buffer;
    if (level == levels) {
      if (g.is_cancelling()) return;
      std::stable_sort(x + static_cast<std::ptrdiff_t>(lo), x + static_cast<std::ptrdiff_t>(hi), cmp);
      std::uninitialized_move(x + static_cast<std::ptrdiff_t>(lo), x + static_cast<std::ptrdiff_t>(hi), z + lo);
      built[leaf] = {lo, hi};
      return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    {
      task_group left;  // its destructor waits for the left half if the right one throws
      left.run([this, lo, mid, level, leaf] { node(lo, mid, level + 1, 2 * leaf); });
      node(mid, hi, level + 1, 2 * leaf + 1);
      left.wait();
    }
    if (g.is_cancelling()) return;  // a child may have stopped before building its run
    const auto xl = x + static_cast<std::ptrdiff_t>(lo), xm = x + static_cast<std::ptrdiff_t>(mid),
               xh = x + static_cast<std::ptrdiff_t>(hi);
    if ((levels - level) % 2 == 1)  // the children's runs are in the buffer: merge them back
      parallel_merge(g, z + lo, z + mid, z + mid, z + hi, xl, cmp, merge_cutoff);
    else parallel_merge(g, xl, xm, xm, xh, z + lo, cmp, merge_cutoff);
  }

  void destroy_built() noexcept {
    if constexpr (!std::is_trivially_destructible_v<T>)
      for (const auto& [lo, hi] : built) std::destroy(buffer + lo, buffer + hi);
  }
};

template <class It, class C>
void parallel_stable_sort_root(task_group& g, It first, It last, const C& comp) {
  using T = typename std::iterator_traits<It>::value_type;
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                "heddle::parallel_stable_sort: the elements must have noexcept moves (the buffer holds them "
                "while only the comparator may throw)");
  const std::size_t n = static_cast<std::size_t>(last - first);
  const comp_ref<C> cmp{&comp};
  const std::size_t p = current_concurrency();
  if (n <= sort_serial_cutoff || p == 1) return std::stable_sort(first, last, cmp);
  std::allocator<T> alloc;
  T* buffer;
  try {
    buffer = alloc.allocate(n);
  } catch (const std::bad_alloc&) {
    return std::stable_sort(first, last, cmp);  // it sorts in place, more slowly, when memory is short
  }
  // Leaves of at least sort_serial_cutoff elements, at least 8 per worker where n allows, and an odd
  // number of levels (see stable_sort_tree).
  int levels = 1;
  while (levels < 40 && (std::size_t{1} << levels) < 8 * p && (n >> (levels + 2)) >= sort_serial_cutoff) levels += 2;
  stable_sort_tree<It, T, comp_ref<C>> tree{g,
                                            first,
                                            buffer,
                                            cmp,
                                            levels,
                                            std::max(merge_serial_cutoff, n / (8 * p)),
                                            std::vector<std::pair<std::size_t, std::size_t>>(std::size_t{1} << levels)};
  try {
    tree.node(0, n, 0, 0);
  } catch (...) {
    g.cancel();
    tree.destroy_built();
    alloc.deallocate(buffer, n);
    throw;
  }
  tree.destroy_built();
  alloc.deallocate(buffer, n);
}

}  // namespace heddle::core_detail
