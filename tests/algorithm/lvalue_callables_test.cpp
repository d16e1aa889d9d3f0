// SPDX-License-Identifier: Apache-2.0
// Callables written as a new user writes them: taking their arguments by non-const lvalue reference
// ([](auto& a, auto& b), [](int& x)) or by value. Every algorithm that takes one accepts them where
// the standard algorithm (or oneTBB's, for the forms std lacks) does, and gives its results. That
// this file compiles is the check that they are accepted: parallel_stable_sort's merge used to call
// its comparator on rvalues, which [](auto& a, auto& b) does not take and a comparator taking
// std::string by value moved out of the runs; the reductions and scans passed their accumulators as
// rvalues only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <list>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <heddle/heddle.hpp>

#include "algorithm_test_support.hpp"

namespace {

using heddle::core_detail::merge_serial_cutoff;
using heddle::core_detail::sort_serial_cutoff;
using range_t = heddle::blocked_range<std::size_t>;

struct keyed {
  std::int64_t key;
  std::size_t order;  // the element's place in the input: shows whether equal keys kept their order
  friend bool operator==(const keyed&, const keyed&) = default;
};

std::vector<keyed> keyed_input(std::size_t n, std::int64_t distinct) {
  std::mt19937_64 gen(n);
  std::vector<keyed> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = {std::int64_t(gen() % std::uint64_t(distinct)), i};
  return v;
}

std::vector<std::int64_t> numbers(std::size_t n) {
  std::mt19937_64 gen(n * 31 + 7);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = std::int64_t(gen() % 2001) - 1000;
  return v;
}

// Sizes that take every path: serial, one merge level, merges split in parallel.
constexpr std::size_t sort_sizes[] = {100, sort_serial_cutoff + 1, 8 * sort_serial_cutoff + 3,
                                      8 * merge_serial_cutoff + 5};

TEST(LvalueCallables, StableSortComparatorOnNonConstReferences) {
  auto by_key = [](auto& a, auto& b) { return a.key < b.key; };
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    for (std::size_t n : sort_sizes) {
      auto v = keyed_input(n, 100);
      auto want = v;
      std::stable_sort(want.begin(), want.end(), by_key);
      heddle::parallel_stable_sort(rt, v.begin(), v.end(), by_key);
      ASSERT_EQ(v, want) << "n=" << n << " workers=" << w;
    }
  }
}

// A comparator taking its arguments by value is called on copies: the elements stay in the runs.
TEST(LvalueCallables, StableSortComparatorTakingStringsByValue) {
  auto by_length = [](std::string a, std::string b) { return a.size() < b.size(); };
  heddle::runtime rt(2);
  const std::size_t n = 4 * merge_serial_cutoff + 1;
  std::mt19937 gen(3);
  std::vector<std::string> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::string(gen() % 40, 'x') + std::to_string(i);
  auto want = v;
  std::stable_sort(want.begin(), want.end(), by_length);
  heddle::parallel_stable_sort(rt, v.begin(), v.end(), by_length);
  EXPECT_EQ(v, want);
}

TEST(LvalueCallables, SortComparatorOnNonConstReferences) {
  auto greater = [](auto& a, auto& b) { return a > b; };
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    for (std::size_t n : sort_sizes) {
      auto v = numbers(n);
      auto want = v;
      std::sort(want.begin(), want.end(), greater);
      heddle::parallel_sort(rt, v.begin(), v.end(), greater);
      ASSERT_EQ(v, want) << "n=" << n << " workers=" << w;
      heddle::parallel_sort(rt, v, greater);  // the range form
      ASSERT_EQ(v, want) << "n=" << n << " workers=" << w;
      // Named non-const references, as std::sort takes them (std::stable_sort does not: its binary
      // searches pass a const value).
      auto less = [](std::int64_t& a, std::int64_t& b) { return a < b; };
      std::sort(want.begin(), want.end(), less);
      heddle::parallel_sort(rt, v.begin(), v.end(), less);
      ASSERT_EQ(v, want) << "n=" << n << " workers=" << w;
    }
  }
}

TEST(LvalueCallables, ForEachBodyOnNonConstReferences) {
  heddle::runtime rt(2);
  auto v = numbers(100'000);
  std::list<std::int64_t> l(v.begin(), v.end());
  auto want = v;
  std::for_each(want.begin(), want.end(), [](std::int64_t& x) { x = 3 * x + 1; });
  heddle::parallel_for_each(rt, v.begin(), v.end(), [](std::int64_t& x) { x = 3 * x + 1; });
  EXPECT_EQ(v, want);
  heddle::parallel_for_each(rt, l, [](auto& x) { x = 3 * x + 1; });
  EXPECT_TRUE(std::equal(l.begin(), l.end(), want.begin(), want.end()));
}

TEST(LvalueCallables, ReduceBodyAndJoinOnNonConstReferences) {
  const auto in = numbers(300'001);
  const std::int64_t want = std::reduce(in.begin(), in.end(), std::int64_t{0}, [](auto& a, auto& b) { return a + b; });
  auto body = [&in](const auto& r, auto& acc) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) acc += in[i];
    return acc;
  };
  auto join = [](auto& a, auto& b) { return a + b; };
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    EXPECT_EQ(heddle::parallel_reduce(rt, range_t(0, in.size()), std::int64_t{0}, body, join), want) << w;
    EXPECT_EQ(heddle::parallel_deterministic_reduce(rt, range_t(0, in.size(), 1000), std::int64_t{0}, body, join), want)
        << w;
  }
  // A value that owns memory, through a body taking it by non-const reference.
  heddle::runtime rt(2);
  const std::vector<std::int64_t> all = heddle::parallel_reduce(
      rt, range_t(0, in.size()), std::vector<std::int64_t>{},
      [&in](const range_t& r, std::vector<std::int64_t>& acc) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) acc.push_back(in[i]);
        return acc;
      },
      [](std::vector<std::int64_t>& a, std::vector<std::int64_t>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
      });
  EXPECT_EQ(all, in);
}

TEST(LvalueCallables, SequenceScansOpOnNonConstReferences) {
  auto plus = [](auto& a, auto& b) { return a + b; };
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    for (std::size_t n : {std::size_t{10}, std::size_t{200'003}}) {
      const auto in = numbers(n);
      std::vector<std::int64_t> want(n), out(n);
      std::inclusive_scan(in.begin(), in.end(), want.begin(), plus);
      heddle::inclusive_scan(rt, in.begin(), in.end(), out.begin(), plus);
      ASSERT_EQ(out, want) << "inclusive n=" << n << " workers=" << w;
      std::inclusive_scan(in.begin(), in.end(), want.begin(), plus, std::int64_t{5});
      heddle::inclusive_scan(rt, in.begin(), in.end(), out.begin(), plus, std::int64_t{5});
      ASSERT_EQ(out, want) << "inclusive with init n=" << n << " workers=" << w;
      std::exclusive_scan(in.begin(), in.end(), want.begin(), std::int64_t{5}, plus);
      heddle::exclusive_scan(rt, in.begin(), in.end(), out.begin(), std::int64_t{5}, plus);
      ASSERT_EQ(out, want) << "exclusive n=" << n << " workers=" << w;
    }
  }
}

TEST(LvalueCallables, ParallelScanBodyAndJoinOnNonConstReferences) {
  const auto in = numbers(200'003);
  std::vector<std::int64_t> want(in.size());
  std::inclusive_scan(in.begin(), in.end(), want.begin());
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    std::vector<std::int64_t> out(in.size(), -1);
    const std::int64_t total = heddle::parallel_scan(
        rt, range_t(0, in.size(), 1000), std::int64_t{0},
        [&](const auto& r, auto& sum, bool is_final) {
          auto s = sum;  // sum may be identity, a const lvalue: auto deduces const there
          for (std::size_t i = r.begin(); i != r.end(); ++i) {
            s += in[i];
            if (is_final) out[i] = s;
          }
          return s;
        },
        [](auto& a, auto& b) { return a + b; });
    EXPECT_EQ(total, want.back()) << w;
    EXPECT_EQ(out, want) << w;
  }
}

TEST(LvalueCallables, PipelineFiltersOnNonConstReferences) {
  using heddle::filter_mode;
  using heddle::flow_control;
  using heddle::make_filter;
  const long n = 20'000;
  heddle::runtime rt(2);
  long next = 0;
  std::vector<std::string> got;
  heddle::parallel_pipeline(rt, 8,
                            make_filter<void, long>(filter_mode::serial_in_order, [&](flow_control& fc) -> long {
                              if (next == n) fc.stop();
                              return next++;
                            }) & make_filter<long, std::string>(filter_mode::parallel, [](long& v) {
                              return std::to_string(v * 2);
                            }) & make_filter<std::string, std::string>(filter_mode::parallel, [](auto& s) {
                              return s + "!";
                            }) & make_filter<std::string, void>(filter_mode::serial_in_order, [&](std::string& s) {
                              got.push_back(std::move(s));
                            }));
  ASSERT_EQ(got.size(), std::size_t(n));
  for (long i = 0; i < n; ++i) ASSERT_EQ(got[std::size_t(i)], std::to_string(2 * i) + "!");
}

TEST(LvalueCallables, ForAndInvokeBodies) {
  heddle::runtime rt(2);
  const std::size_t n = 100'000;
  algo_test::coverage pieces(n), indices(n);
  heddle::parallel_for(rt, range_t(0, n), [&](auto& r) {  // r: the piece, a const lvalue as in oneTBB
    for (std::size_t i = r.begin(); i != r.end(); ++i) pieces.hit(i);
  });
  EXPECT_EQ(pieces.first_bad(), n);
  heddle::parallel_for(rt, std::size_t{0}, n, [&](const auto& i) { indices.hit(i); });
  EXPECT_EQ(indices.first_bad(), n);
  // The index on a non-const reference, as oneTBB's index form takes it: the body gets a copy, so
  // changing it leaves the loop alone. With a step, and with a named partitioner.
  algo_test::coverage refs(n), stepped(n), partitioned(n);
  heddle::parallel_for(rt, std::size_t{0}, n, [&](auto& i) { refs.hit(i), i = n; });
  EXPECT_EQ(refs.first_bad(), n);
  heddle::parallel_for(rt, std::size_t{0}, n, std::size_t{1}, [&](std::size_t& i) { stepped.hit(i), ++i; });
  EXPECT_EQ(stepped.first_bad(), n);
  heddle::parallel_for(
      rt, std::size_t{0}, n, [&](auto& i) { partitioned.hit(i), --i; }, 64, heddle::simple_partitioner{});
  EXPECT_EQ(partitioned.first_bad(), n);

  // Bodies with state of their own (mutable lambdas), passed as lvalues and as temporaries.
  int a = 0, b = 0;
  auto left = [&a, k = 1]() mutable { a = k++; };
  heddle::parallel_invoke(rt, left, [&b, k = 2]() mutable { b = k++; });
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
}

}  // namespace
