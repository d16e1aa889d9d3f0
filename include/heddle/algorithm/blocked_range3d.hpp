// SPDX-License-Identifier: Apache-2.0
// heddle::blocked_range3d<PageValue, RowValue, ColValue>: pages x rows x columns, each a
// blocked_range, as tbb::blocked_range3d. A split halves the dimension that is longest relative to
// its grain.
//
// Cost: three blocked_ranges (nine words); splitting is constant time.
// Thread safety: a value: its const calls are thread-safe; a split, which changes the range it
// splits, is that range's holder's call.
#pragma once

#include "heddle/algorithm/blocked_range.hpp"
#include "heddle/algorithm/detail/split_choice.hpp"
#include "heddle/algorithm/split.hpp"

namespace heddle {

template <class PageValue, class RowValue = PageValue, class ColValue = RowValue>
class blocked_range3d {
 public:
  using page_range_type = blocked_range<PageValue>;
  using row_range_type = blocked_range<RowValue>;
  using col_range_type = blocked_range<ColValue>;

  blocked_range3d(PageValue page_begin, PageValue page_end, typename page_range_type::size_type page_grainsize,
                  RowValue row_begin, RowValue row_end, typename row_range_type::size_type row_grainsize,
                  ColValue col_begin, ColValue col_end, typename col_range_type::size_type col_grainsize)
      : pages_(page_begin, page_end, page_grainsize),
        rows_(row_begin, row_end, row_grainsize),
        cols_(col_begin, col_end, col_grainsize) {}
  // Grain 1 in every dimension.
  blocked_range3d(PageValue page_begin, PageValue page_end, RowValue row_begin, RowValue row_end, ColValue col_begin,
                  ColValue col_end)
      : pages_(page_begin, page_end), rows_(row_begin, row_end), cols_(col_begin, col_end) {}

  // Splits r: this range takes the upper half of the chosen dimension, r keeps the lower.
  blocked_range3d(blocked_range3d& r, split) : pages_(r.pages_), rows_(r.rows_), cols_(r.cols_) { cut(r, split{}); }
  blocked_range3d(blocked_range3d& r, proportional_split& p) : pages_(r.pages_), rows_(r.rows_), cols_(r.cols_) {
    cut(r, p);
  }

  static constexpr bool is_splittable_in_proportion = true;

  bool empty() const { return pages_.empty() || rows_.empty() || cols_.empty(); }
  bool is_divisible() const { return pages_.is_divisible() || rows_.is_divisible() || cols_.is_divisible(); }
  const page_range_type& pages() const { return pages_; }
  const row_range_type& rows() const { return rows_; }
  const col_range_type& cols() const { return cols_; }

 private:
  template <class How>
  void cut(blocked_range3d& r, How&& how) {
    using core_detail::split_second;
    // The longest of the three relative to its grain; ties go outward.
    if (split_second(r.pages_, r.rows_)) {
      if (split_second(r.rows_, r.cols_)) cols_ = col_range_type(r.cols_, how);
      else rows_ = row_range_type(r.rows_, how);
    } else {
      if (split_second(r.pages_, r.cols_)) cols_ = col_range_type(r.cols_, how);
      else pages_ = page_range_type(r.pages_, how);
    }
  }

  page_range_type pages_;
  row_range_type rows_;
  col_range_type cols_;
};

}  // namespace heddle
