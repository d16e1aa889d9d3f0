// SPDX-License-Identifier: Apache-2.0
// The tags of the range concept, as oneTBB spells them (tbb::split, tbb::proportional_split).
//
// A range type R that heddle's range algorithms accept (parallel_for, parallel_reduce,
// parallel_deterministic_reduce, parallel_scan) is oneTBB's Range:
//   R(const R&)                       copyable, and destructible
//   bool empty() const                whether it holds nothing (an empty range is never given to a body)
//   bool is_divisible() const         whether it may be split in two
//   R(R& r, heddle::split)            splits r: the new range takes the upper part, r keeps the lower
// and optionally, to let auto_partitioner and static_partitioner cut uneven pieces:
//   R(R& r, heddle::proportional_split& p)   the new range takes about p.right()/(p.left()+p.right())
//   static constexpr bool is_splittable_in_proportion = true;
// blocked_range, blocked_range2d and blocked_range3d are such ranges.
#pragma once

#include <concepts>
#include <cstddef>

namespace heddle {

// Picks the splitting constructor of a range.
struct split {};

// Picks the proportional splitting constructor: left() parts stay in the old range, right() parts
// go to the new one.
class proportional_split {
 public:
  proportional_split(std::size_t left, std::size_t right) noexcept : left_(left), right_(right) {}
  std::size_t left() const noexcept { return left_; }
  std::size_t right() const noexcept { return right_; }
  // oneTBB's spelling converts to split, so a range without the proportional constructor can still
  // be given one (it then splits in halves).
  operator split() const noexcept { return split{}; }

 private:
  std::size_t left_, right_;
};

namespace core_detail {

// oneTBB's Range requirements (see above).
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class R>
concept splittable_range = std::copy_constructible<R> && std::constructible_from<R, R&, split> && requires(const R& r) {
  { r.empty() } -> std::convertible_to<bool>;
  { r.is_divisible() } -> std::convertible_to<bool>;
};

// Whether R declares that its proportional splitting constructor cuts in proportion.
template <class R>
concept proportionally_splittable = splittable_range<R> && std::constructible_from<R, R&, proportional_split&> &&
                                    requires { requires R::is_splittable_in_proportion; };
// clang-format on

}  // namespace core_detail

}  // namespace heddle
