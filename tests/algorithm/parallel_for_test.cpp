// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_for: every index exactly once for any grain, empty and one-element ranges,
// index types, nesting, explicit runtimes and exceptions.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "algorithm_test_support.hpp"
#include "test_support.hpp"

namespace {

using algo_test::coverage;

void expect_exact_coverage(std::size_t n, std::size_t grain) {
  coverage c(n);
  heddle::parallel_for(
      std::size_t{0}, n, [&](std::size_t i) { c.hit(i); }, grain);
  const std::size_t bad = c.first_bad();
  EXPECT_EQ(bad, n) << "n=" << n << " grain=" << grain << ": index " << bad << " hit " << (bad < n ? c.at(bad) : 0)
                    << " times";
}

TEST(ParallelFor, EveryIndexExactlyOnceForManyGrains) {
  const std::size_t n = heddle_test::scaled<std::size_t>(1'000'003, 300'007);
  for (std::size_t grain : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{1000}, n / 3,
                            n - 1, n, n + 5, std::numeric_limits<std::size_t>::max()})
    expect_exact_coverage(n, grain);
}

TEST(ParallelFor, SmallSizes) {
  for (std::size_t n = 1; n <= 70; ++n)
    for (std::size_t grain : {0, 1, 3, 64}) expect_exact_coverage(n, grain);
}

TEST(ParallelFor, EmptyAndReversedRangesCallNothing) {
  std::atomic<int> calls{0};
  heddle::parallel_for(std::size_t{0}, std::size_t{0}, [&](std::size_t) { calls++; });
  heddle::parallel_for(5, 5, [&](int) { calls++; });
  heddle::parallel_for(10, 3, [&](int) { calls++; });
  heddle::parallel_for(
      -1, -7, [&](int) { calls++; }, 1);
  EXPECT_EQ(calls.load(), 0);
}

TEST(ParallelFor, OneElement) {
  std::vector<int> seen;
  heddle::parallel_for(41, 42, [&](int i) { seen.push_back(i); });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], 41);
  std::atomic<long> got{-1};
  heddle::parallel_for(
      std::size_t{7}, std::size_t{8}, [&](std::size_t i) { got = static_cast<long>(i); }, 1);
  EXPECT_EQ(got.load(), 7);
}

TEST(ParallelFor, MixedIndexTypes) {
  {
    coverage c(1000);
    heddle::parallel_for(
        0, std::size_t{1000}, [&](std::size_t i) { c.hit(i); }, 3);  // int, size_t
    EXPECT_EQ(c.first_bad(), 1000u);
  }
  {
    coverage c(1000);
    heddle::parallel_for(
        short{0}, 1000L, [&](long i) { c.hit(static_cast<std::size_t>(i)); }, 5);  // short, long
    EXPECT_EQ(c.first_bad(), 1000u);
  }
  {
    coverage c(600);
    heddle::parallel_for(std::uint32_t{100}, std::uint64_t{700}, [&](std::uint64_t i) { c.hit(i - 100); });
    EXPECT_EQ(c.first_bad(), 600u);
  }
}

TEST(ParallelFor, NegativeRanges) {
  coverage c(1000);
  heddle::parallel_for(
      -500, 500, [&](int i) { c.hit(static_cast<std::size_t>(i + 500)); }, 7);
  EXPECT_EQ(c.first_bad(), 1000u);
  std::atomic<long> sum{0};
  heddle::parallel_for(
      -1000L, -10L, [&](long i) { sum += i; }, 1);
  long expect = 0;
  for (long i = -1000; i < -10; ++i) expect += i;
  EXPECT_EQ(sum.load(), expect);
}

TEST(ParallelFor, NarrowIndexTypesAtTheirLimits) {
  {
    coverage c(255);
    heddle::parallel_for(
        std::uint8_t{0}, std::uint8_t{255}, [&](std::uint8_t i) { c.hit(i); }, 1);
    EXPECT_EQ(c.first_bad(), 255u);
  }
  {
    coverage c(255);
    heddle::parallel_for(
        std::int8_t{-128}, std::int8_t{127}, [&](std::int8_t i) { c.hit(static_cast<std::size_t>(i + 128)); }, 1);
    EXPECT_EQ(c.first_bad(), 255u);
  }
  {
    constexpr std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
    coverage c(777);
    heddle::parallel_for(
        top - 777, top, [&](std::uint64_t i) { c.hit(static_cast<std::size_t>(i - (top - 777))); }, 1);
    EXPECT_EQ(c.first_bad(), 777u);
  }
  {
    // A range near the top of the type: the halving must not overflow.
    constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
    coverage c(1000);
    heddle::parallel_for(
        top - 1000, top, [&](std::int64_t i) { c.hit(static_cast<std::size_t>(i - (top - 1000))); }, 1);
    EXPECT_EQ(c.first_bad(), 1000u);
  }
}

TEST(ParallelFor, RangeWiderThanItsSignedIndexType) {
  // [INT_MIN, INT_MAX) has more elements than int can count: computing its size or its halves in
  // int overflows (undefined behaviour, which UBSan reports). The first call throws, so the test
  // stays short: the loop is cancelled and the exception comes back.
  constexpr int lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
  std::atomic<long> calls{0};
  EXPECT_THROW(heddle::parallel_for(lo, hi,
                                    [&](int) {
                                      calls++;
                                      throw std::runtime_error("stop");
                                    }),
               std::runtime_error);
  EXPECT_GE(calls.load(), 1);
  EXPECT_LT(calls.load(), 1000);
}

TEST(ParallelFor, SumMatchesSerial) {
  const std::size_t n = 1 << 20;
  std::vector<std::uint32_t> v(n);
  heddle::parallel_for(std::size_t{0}, n,
                       [&](std::size_t i) { v[i] = static_cast<std::uint32_t>(heddle_test::mix(i)); });
  std::atomic<std::uint64_t> total{0};
  heddle::parallel_for(std::size_t{0}, n / 1024, [&](std::size_t b) {
    std::uint64_t s = 0;
    for (std::size_t i = b * 1024; i < (b + 1) * 1024; ++i) s += v[i];
    total += s;
  });
  std::uint64_t expect = 0;
  for (std::size_t i = 0; i < n; ++i) expect += static_cast<std::uint32_t>(heddle_test::mix(i));
  EXPECT_EQ(total.load(), expect);
}

TEST(ParallelFor, NestedLoops) {
  constexpr int rows = 300, cols = 301;
  coverage c(rows * cols);
  heddle::parallel_for(
      0, rows,
      [&](int r) {
        heddle::parallel_for(
            0, cols, [&](int k) { c.hit(static_cast<std::size_t>(r * cols + k)); }, 16);
      },
      1);
  EXPECT_EQ(c.first_bad(), std::size_t{rows * cols});
}

TEST(ParallelFor, InsideATaskOfAnExplicitRuntime) {
  heddle::runtime rt(2);
  const auto before = rt.stats();
  const auto main_id = std::this_thread::get_id();
  coverage c(100000);
  std::atomic<int> on_main{0};
  auto done = rt.task([&] {
    heddle::parallel_for(
        0, 100000,
        [&](int i) {
          if (std::this_thread::get_id() == main_id) on_main++;
          c.hit(static_cast<std::size_t>(i));
        },
        100);
  });
  done.get();
  EXPECT_EQ(c.first_bad(), 100000u);
  EXPECT_EQ(on_main.load(), 0);
  // Its pieces were spawned on rt's workers: at least 999 of the 1000 pieces became tasks.
  EXPECT_GE(rt.stats().spawned - before.spawned, 999u);
}

TEST(ParallelFor, FromAForeignThreadTheCallerOnlySleeps) {
  const auto main_id = std::this_thread::get_id();
  std::atomic<int> on_main{0}, n{0};
  heddle::parallel_for(0, 10000, [&](int) {
    if (std::this_thread::get_id() == main_id) on_main++;
    n++;
  });
  EXPECT_EQ(n.load(), 10000);
  EXPECT_EQ(on_main.load(), 0);
}

TEST(ParallelFor, ExceptionIsRethrown) {
  std::atomic<int> calls{0};
  try {
    heddle::parallel_for(
        0, 100000,
        [&](int i) {
          calls++;
          if (i == 4321) throw std::out_of_range("index 4321");
        },
        10);
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "index 4321");
  }
  EXPECT_GE(calls.load(), 1);
  EXPECT_LE(calls.load(), 100000);
  // The runtime is fine afterwards.
  coverage c(1000);
  heddle::parallel_for(0, 1000, [&](int i) { c.hit(static_cast<std::size_t>(i)); });
  EXPECT_EQ(c.first_bad(), 1000u);
}

TEST(ParallelFor, ExceptionFromInsideATask) {
  auto r = heddle::task([] {
    try {
      heddle::parallel_for(
          0, 5000,
          [](int i) {
            if (i % 1000 == 999) throw std::runtime_error("inner");
          },
          1);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  });
  EXPECT_EQ(*r, "inner");
}

TEST(ParallelFor, ExceptionStopsPiecesNotYetStarted) {
  // One worker, grain 1: after the first index throws, the remaining pieces are skipped.
  heddle::runtime rt(1);
  std::atomic<int> calls{0};
  auto r = rt.task([&] {
    try {
      heddle::parallel_for(
          0, 100000,
          [&](int) {
            calls++;
            throw std::runtime_error("stop");
          },
          1);
    } catch (const std::runtime_error&) {
      return true;
    }
    return false;
  });
  EXPECT_TRUE(*r);
  EXPECT_LT(calls.load(), 100);
}

TEST(ParallelFor, ExceptionInTheCallersOwnPieceStopsTheOthers) {
  // Called on a worker, parallel_for runs the lowest piece itself. When that piece throws, the
  // pieces not yet started must be skipped just as when any other piece throws.
  heddle::runtime rt(1);
  std::atomic<int> calls{0};
  auto r = rt.task([&] {
    try {
      heddle::parallel_for(
          0, 100000,
          [&](int i) {
            calls++;
            if (i == 0) throw std::runtime_error("first index");
          },
          1);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  });
  EXPECT_EQ(*r, "first index");
  EXPECT_LT(calls.load(), 100);
}

}  // namespace
