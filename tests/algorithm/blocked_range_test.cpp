// SPDX-License-Identifier: Apache-2.0
// heddle::blocked_range, blocked_range2d, blocked_range3d: sizes, splits (in halves and in
// proportion), iterator ranges, the dimension a multi-dimensional range splits, wide intervals.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <heddle/heddle.hpp>

namespace {

TEST(BlockedRange, Basics) {
  heddle::blocked_range<int> r(3, 10, 2);
  EXPECT_EQ(r.begin(), 3);
  EXPECT_EQ(r.end(), 10);
  EXPECT_EQ(r.size(), 7u);
  EXPECT_EQ(r.grainsize(), 2u);
  EXPECT_FALSE(r.empty());
  EXPECT_TRUE(r.is_divisible());
  EXPECT_TRUE(heddle::blocked_range<int>(5, 5).empty());
  EXPECT_FALSE(heddle::blocked_range<int>(5, 6).is_divisible());
  EXPECT_FALSE(heddle::blocked_range<int>(0, 4, 4).is_divisible());
  EXPECT_TRUE(heddle::blocked_range<int>(0, 5, 4).is_divisible());
  EXPECT_EQ(heddle::blocked_range<int>(0, 5, 0).grainsize(), 1u);  // 0 counts as 1
}

TEST(BlockedRange, SplitInHalvesUpperGoesToTheNewRange) {
  heddle::blocked_range<int> r(0, 11);
  heddle::blocked_range<int> upper(r, heddle::split{});
  EXPECT_EQ(r.begin(), 0);
  EXPECT_EQ(r.end(), 5);
  EXPECT_EQ(upper.begin(), 5);
  EXPECT_EQ(upper.end(), 11);
  EXPECT_EQ(upper.grainsize(), r.grainsize());
}

TEST(BlockedRange, ProportionalSplit) {
  heddle::blocked_range<long> r(0, 300);
  heddle::proportional_split p(2, 1);
  heddle::blocked_range<long> right(r, p);
  EXPECT_EQ(r.end(), 200);
  EXPECT_EQ(right.begin(), 200);
  EXPECT_EQ(right.end(), 300);
  // Never empty on either side, however uneven the proportion.
  heddle::blocked_range<long> two(0, 2);
  heddle::proportional_split lopsided(1000, 1);
  heddle::blocked_range<long> rest(two, lopsided);
  EXPECT_EQ(two.size(), 1u);
  EXPECT_EQ(rest.size(), 1u);
  static_assert(heddle::core_detail::proportionally_splittable<heddle::blocked_range<long>>);
}

TEST(BlockedRange, Iterators) {
  std::vector<int> v(100);
  heddle::blocked_range<std::vector<int>::iterator> r(v.begin(), v.end(), 10);
  EXPECT_EQ(r.size(), 100u);
  heddle::blocked_range<std::vector<int>::iterator> upper(r, heddle::split{});
  EXPECT_EQ(r.end(), v.begin() + 50);
  EXPECT_EQ(upper.begin(), v.begin() + 50);
  const int* p = v.data();
  heddle::blocked_range<const int*> q(p, p + 7);
  EXPECT_EQ(q.size(), 7u);
}

TEST(BlockedRange, WiderThanItsSignedType) {
  constexpr int lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
  heddle::blocked_range<int> r(lo, hi);
  EXPECT_EQ(r.size(), std::size_t{std::numeric_limits<std::uint32_t>::max()});
  heddle::blocked_range<int> upper(r, heddle::split{});
  EXPECT_EQ(r.begin(), lo);
  EXPECT_EQ(r.end(), upper.begin());
  EXPECT_EQ(upper.end(), hi);
  EXPECT_EQ(r.size() + upper.size(), std::size_t{std::numeric_limits<std::uint32_t>::max()});
}

TEST(BlockedRange2d, SplitsTheLongerDimensionRelativeToItsGrain) {
  heddle::blocked_range2d<int> wide(0, 10, 0, 1000);
  heddle::blocked_range2d<int> right(wide, heddle::split{});
  EXPECT_EQ(wide.rows().size(), 10u);
  EXPECT_EQ(wide.cols().end(), 500);
  EXPECT_EQ(right.cols().begin(), 500);
  EXPECT_EQ(right.rows().size(), 10u);

  heddle::blocked_range2d<int> tall(0, 1000, 0, 10);
  heddle::blocked_range2d<int> lower(tall, heddle::split{});
  EXPECT_EQ(tall.rows().end(), 500);
  EXPECT_EQ(lower.rows().begin(), 500);
  EXPECT_EQ(lower.cols().size(), 10u);

  // 1000 rows with grain 500 are 2 grains; 100 columns with grain 1 are 100: columns split.
  heddle::blocked_range2d<int> g(0, 1000, 500, 0, 100, 1);
  heddle::blocked_range2d<int> h(g, heddle::split{});
  EXPECT_EQ(g.rows().size(), 1000u);
  EXPECT_EQ(h.cols().begin(), 50);
  // Only divisible dimensions are split.
  heddle::blocked_range2d<int> one_row(0, 1, 0, 2);
  EXPECT_TRUE(one_row.is_divisible());
  heddle::blocked_range2d<int> other(one_row, heddle::split{});
  EXPECT_EQ(other.cols().size(), 1u);
  EXPECT_EQ(other.rows().size(), 1u);
  EXPECT_FALSE(heddle::blocked_range2d<int>(0, 1, 0, 1).is_divisible());
  EXPECT_TRUE(heddle::blocked_range2d<int>(0, 0, 0, 5).empty());
}

TEST(BlockedRange2d, MixedTypesAndProportionalSplit) {
  heddle::blocked_range2d<int, std::size_t> r(0, 4, 1, std::size_t{0}, std::size_t{300}, 1);
  heddle::proportional_split p(1, 2);
  heddle::blocked_range2d<int, std::size_t> right(r, p);
  EXPECT_EQ(r.cols().size(), 100u);
  EXPECT_EQ(right.cols().size(), 200u);
}

TEST(BlockedRange3d, SplitsTheLongestDimension) {
  heddle::blocked_range3d<int> pages(0, 100, 0, 10, 0, 10);
  heddle::blocked_range3d<int> a(pages, heddle::split{});
  EXPECT_EQ(a.pages().begin(), 50);
  heddle::blocked_range3d<int> rows(0, 10, 0, 100, 0, 10);
  heddle::blocked_range3d<int> b(rows, heddle::split{});
  EXPECT_EQ(b.rows().begin(), 50);
  EXPECT_EQ(b.pages().size(), 10u);
  heddle::blocked_range3d<int> cols(0, 10, 0, 10, 0, 100);
  heddle::blocked_range3d<int> c(cols, heddle::split{});
  EXPECT_EQ(c.cols().begin(), 50);
  EXPECT_EQ(c.rows().size(), 10u);
  heddle::blocked_range3d<int> only_cols(0, 1, 0, 1, 0, 4);
  heddle::blocked_range3d<int> d(only_cols, heddle::split{});
  EXPECT_EQ(d.cols().size(), 2u);
  EXPECT_FALSE(heddle::blocked_range3d<int>(0, 1, 0, 1, 0, 1).is_divisible());
  EXPECT_TRUE(heddle::blocked_range3d<int>(0, 1, 0, 0, 0, 1).empty());
}

}  // namespace
