// SPDX-License-Identifier: Apache-2.0
// heddle::blocked_range2d<RowValue, ColValue>: rows x columns, each a blocked_range, as
// tbb::blocked_range2d. A split halves the dimension that is longest relative to its grain.
//
// Cost: two blocked_ranges (six words); splitting is constant time.
// Thread safety: a value: its const calls are thread-safe; a split, which changes the range it
// splits, is that range's holder's call.
#pragma once

#include "heddle/algorithm/blocked_range.hpp"
#include "heddle/algorithm/detail/split_choice.hpp"
#include "heddle/algorithm/split.hpp"

namespace heddle {

template <class RowValue, class ColValue = RowValue>
class blocked_range2d {
 public:
  using row_range_type = blocked_range<RowValue>;
  using col_range_type = blocked_range<ColValue>;

  blocked_range2d(RowValue row_begin, RowValue row_end, typename row_range_type::size_type row_grainsize,
                  ColValue col_begin, ColValue col_end, typename col_range_type::size_type col_grainsize)
      : rows_(row_begin, row_end, row_grainsize), cols_(col_begin, col_end, col_grainsize) {}
  // Grain 1 in both dimensions.
  blocked_range2d(RowValue row_begin, RowValue row_end, ColValue col_begin, ColValue col_end)
      : rows_(row_begin, row_end), cols_(col_begin, col_end) {}

  // Splits r: this range takes the upper half of the chosen dimension, r keeps the lower.
  blocked_range2d(blocked_range2d& r, split) : rows_(r.rows_), cols_(r.cols_) { cut(r, split{}); }
  blocked_range2d(blocked_range2d& r, proportional_split& p) : rows_(r.rows_), cols_(r.cols_) { cut(r, p); }

  static constexpr bool is_splittable_in_proportion = true;

  bool empty() const { return rows_.empty() || cols_.empty(); }
  bool is_divisible() const { return rows_.is_divisible() || cols_.is_divisible(); }
  const row_range_type& rows() const { return rows_; }
  const col_range_type& cols() const { return cols_; }

 private:
  template <class How>
  void cut(blocked_range2d& r, How&& how) {
    if (core_detail::split_second(r.rows_, r.cols_)) cols_ = col_range_type(r.cols_, how);
    else rows_ = row_range_type(r.rows_, how);
  }

  row_range_type rows_;
  col_range_type cols_;
};

}  // namespace heddle
