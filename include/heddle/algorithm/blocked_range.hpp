// SPDX-License-Identifier: Apache-2.0
// heddle::blocked_range<Value>: a half-open interval [begin, end) of integers or random-access
// iterators that splits in halves down to a grain size, as tbb::blocked_range.
//
// Cost: a range is three words; splitting is constant time (no allocation).
// Thread safety: a value: its const calls are thread-safe; a split, which changes the range it
// splits, is that range's holder's call.
#pragma once

#include <cstddef>
#include <iterator>
#include <type_traits>

#include "heddle/algorithm/split.hpp"

namespace heddle {

template <class Value>
class blocked_range {
  static_assert(std::is_integral_v<Value> || std::random_access_iterator<Value>,
                "heddle::blocked_range: Value must be an integer or a random-access iterator");

 public:
  using const_iterator = Value;
  using size_type = std::size_t;

  // [begin, end) split no finer than `grainsize` elements (0 counts as 1). begin must not be after end.
  blocked_range(Value begin, Value end, size_type grainsize = 1) noexcept(std::is_nothrow_copy_constructible_v<Value>)
      : end_(end), begin_(begin), grain_(grainsize == 0 ? 1 : grainsize) {}

  // Splits r in halves: this range takes the upper half, r keeps the lower.
  blocked_range(blocked_range& r, split) : end_(r.end_), begin_(advance(r.begin_, r.size() / 2)), grain_(r.grain_) {
    r.end_ = begin_;
  }
  // Splits r in proportion: this range takes about p.right() / (p.left() + p.right()) of it,
  // rounded, at least one element and never all of them.
  blocked_range(blocked_range& r, proportional_split& p)
      : end_(r.end_), begin_(advance(r.begin_, r.size() - right_part(r.size(), p))), grain_(r.grain_) {
    r.end_ = begin_;
  }

  static constexpr bool is_splittable_in_proportion = true;

  const_iterator begin() const { return begin_; }
  const_iterator end() const { return end_; }
  // Computed without overflow, also when the interval is wider than Value's signed range.
  size_type size() const {
    if constexpr (std::is_integral_v<Value>) {
      using U = std::make_unsigned_t<Value>;
      return static_cast<size_type>(static_cast<U>(static_cast<U>(end_) - static_cast<U>(begin_)));
    } else {
      return static_cast<size_type>(end_ - begin_);
    }
  }
  size_type grainsize() const { return grain_; }
  bool empty() const { return !(begin_ < end_); }
  // More elements than the grain size.
  bool is_divisible() const { return grain_ < size(); }

 private:
  static Value advance(Value v, size_type n) {
    if constexpr (std::is_integral_v<Value>) {
      using U = std::make_unsigned_t<Value>;
      return static_cast<Value>(static_cast<U>(static_cast<U>(v) + static_cast<U>(n)));
    } else {
      return v + static_cast<std::iter_difference_t<Value>>(n);
    }
  }
  static size_type right_part(size_type n, const proportional_split& p) {
    const size_type parts = p.left() + p.right();
    if (parts == 0 || n < 2) return n / 2;
    // n * right / parts, rounded, without overflowing for large n.
    const auto exact = static_cast<long double>(n) * static_cast<long double>(p.right()) /
                       static_cast<long double>(parts);
    size_type r = static_cast<size_type>(exact + 0.5L);
    if (r < 1) r = 1;
    if (r > n - 1) r = n - 1;
    return r;
  }

  // oneTBB's order: end before begin, so that the splitting constructor can read r.end_ first.
  Value end_;
  Value begin_;
  size_type grain_;
};

}  // namespace heddle
