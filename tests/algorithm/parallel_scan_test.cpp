// SPDX-License-Identifier: Apache-2.0
// heddle::inclusive_scan, exclusive_scan and parallel_scan: against std's serial scans for every
// worker count and size around the tile boundaries, in place, non-commutative operations, types
// without a default constructor, errors and cancellation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "algorithm_test_support.hpp"
#include "test_support.hpp"

namespace {

std::vector<std::int64_t> input(std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int64_t>(heddle_test::mix(i) % 2001) - 1000;
  return v;
}

TEST(Scan, MatchesStdForEverySizeAndWorkerCount) {
  const std::size_t big = heddle_test::scaled<std::size_t>(1'000'003, 200'003);
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{16383}, std::size_t{16384},
                          std::size_t{16385}, std::size_t{65536 * 2 + 7}, big}) {
      const auto in = input(n);
      std::vector<std::int64_t> expect(n), got(n, -1);
      std::inclusive_scan(in.begin(), in.end(), expect.begin());
      EXPECT_EQ(heddle::inclusive_scan(rt, in.begin(), in.end(), got.begin()), got.end());
      EXPECT_EQ(got, expect) << "inclusive, n=" << n << ", " << w << " workers";
      std::exclusive_scan(in.begin(), in.end(), expect.begin(), std::int64_t{5});
      heddle::exclusive_scan(rt, in.begin(), in.end(), got.begin(), std::int64_t{5});
      EXPECT_EQ(got, expect) << "exclusive, n=" << n;
      std::inclusive_scan(in.begin(), in.end(), expect.begin(), std::plus<>{}, std::int64_t{-3});
      heddle::inclusive_scan(rt, in.begin(), in.end(), got.begin(), std::plus<>{}, std::int64_t{-3});
      EXPECT_EQ(got, expect) << "inclusive with init, n=" << n;
    }
  }
}

void in_place_and_other_operations(heddle::runtime& rt);

TEST(Scan, InPlaceAndOtherOperations) {
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    in_place_and_other_operations(rt);
  }
}

void in_place_and_other_operations(heddle::runtime& rt) {
  // 300,001 int64: two blocks of tiles with 2 workers, one with 4, a single pass with 1.
  const std::size_t n = 300'001;
  auto v = input(n);
  std::vector<std::int64_t> expect(n);
  std::inclusive_scan(v.begin(), v.end(), expect.begin(), [](auto a, auto b) { return std::max(a, b); });
  heddle::inclusive_scan(rt, v.begin(), v.end(), v.begin(), [](auto a, auto b) { return std::max(a, b); });
  EXPECT_EQ(v, expect);
  v = input(n);
  std::exclusive_scan(v.begin(), v.end(), expect.begin(), std::int64_t{1}, std::bit_xor<>{});
  heddle::exclusive_scan(rt, v.data(), v.data() + n, v.data(), std::int64_t{1}, std::bit_xor<>{});
  EXPECT_EQ(v, expect);
}

// 2x2 integer matrices under multiplication: associative, not commutative, no default constructor.
struct mat {
  mat(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) : m{a, b, c, d} {}
  std::int64_t m[4];
  friend mat operator*(const mat& x, const mat& y) {
    constexpr std::int64_t mod = 1'000'003;
    return mat((x.m[0] * y.m[0] + x.m[1] * y.m[2]) % mod, (x.m[0] * y.m[1] + x.m[1] * y.m[3]) % mod,
               (x.m[2] * y.m[0] + x.m[3] * y.m[2]) % mod, (x.m[2] * y.m[1] + x.m[3] * y.m[3]) % mod);
  }
  bool operator==(const mat&) const = default;
};

TEST(Scan, NonCommutativeWithoutDefaultConstructor) {
  const std::size_t n = 100'003;
  std::vector<mat> in;
  in.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = static_cast<std::int64_t>(heddle_test::mix(i) % 7);
    in.emplace_back(r, 1, 1, 0);
  }
  auto mul = [](const mat& a, const mat& b) { return a * b; };
  std::vector<mat> expect(in), got(in);
  std::inclusive_scan(in.begin(), in.end(), expect.begin(), mul);
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    heddle::inclusive_scan(rt, in.begin(), in.end(), got.begin(), mul);
    EXPECT_TRUE(got == expect) << w << " workers";
  }
}

TEST(ParallelScan, FunctionalFormMatchesSerialWithEveryPartitioner) {
  const std::size_t n = 200'003;
  const auto in = input(n);
  std::vector<std::int64_t> expect(n);
  std::inclusive_scan(in.begin(), in.end(), expect.begin());
  using range_t = heddle::blocked_range<std::size_t>;
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    auto run = [&](auto... part) {
      std::vector<std::int64_t> out(n, -1);
      const std::int64_t total = heddle::parallel_scan(
          rt, range_t(0, n, 1000), std::int64_t{0},
          [&](const range_t& r, std::int64_t sum, bool is_final) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) {
              sum += in[i];
              if (is_final) out[i] = sum;
            }
            return sum;
          },
          [](std::int64_t a, std::int64_t b) { return a + b; }, part...);
      EXPECT_EQ(total, expect.back());
      EXPECT_EQ(out, expect) << w << " workers";
    };
    run();
    run(heddle::simple_partitioner{});
    run(heddle::static_partitioner{});
  }
  // A user's range; an empty range returns the identity.
  heddle::runtime rt(2);
  std::vector<std::size_t> out(1000);
  const std::size_t total = heddle::parallel_scan(
      rt, algo_test::thirds_range(0, 1000), std::size_t{0},
      [&](const algo_test::thirds_range& r, std::size_t sum, bool is_final) {
        for (std::size_t i = r.lo(); i < r.hi(); ++i) {
          sum += i;
          if (is_final) out[i] = sum;
        }
        return sum;
      },
      std::plus<>{}, heddle::simple_partitioner{});
  EXPECT_EQ(total, 999u * 1000 / 2);
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(out[i], i * (i + 1) / 2);
  EXPECT_EQ(heddle::parallel_scan(
                range_t(3, 3), 9, [](const range_t&, int s, bool) { return s + 1; }, std::plus<>{}),
            9);
}

TEST(ParallelScan, TilesReducedFirstAreScannedInTheSecondPass) {
  // Tile 0 waits until another tile has been reduced (the frontier is stuck at 0 meanwhile, so the
  // idle worker that steals the upper tiles can only reduce them): both passes are exercised.
  heddle::runtime rt(2);
  using range_t = heddle::blocked_range<std::size_t>;
  const std::size_t n = 100'000;
  std::vector<std::size_t> out(n);
  std::atomic<bool> reduced{false};
  std::atomic<int> finals{0};
  const std::size_t total = heddle::parallel_scan(
      rt, range_t(0, n), std::size_t{0},
      [&](const range_t& r, std::size_t sum, bool is_final) {
        if (is_final && r.begin() == 0) {
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
          while (!reduced.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
        }
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          sum += i % 13;
          if (is_final) out[i] = sum;
        }
        if (is_final) finals++;
        else reduced = true;
        return sum;
      },
      std::plus<>{});
  EXPECT_TRUE(reduced.load());
  std::size_t expect = 0;
  for (std::size_t i = 0; i < n; ++i) {
    expect += i % 13;
    ASSERT_EQ(out[i], expect) << i;
  }
  EXPECT_EQ(total, expect);
  EXPECT_EQ(finals.load(), 8);  // every one of the 4 × 2 tiles scanned for good exactly once
}

TEST(Scan, ErrorsAndCancellation) {
  heddle::runtime rt(2);
  const auto in = input(400'000);
  std::vector<std::int64_t> out(in.size());
  std::atomic<long> calls{0};
  EXPECT_THROW(heddle::inclusive_scan(rt, in.begin(), in.end(), out.begin(),
                                      [&](std::int64_t a, std::int64_t b) {
                                        if (calls++ == 1000) throw std::overflow_error("op");
                                        return a + b;
                                      }),
               std::overflow_error);
  heddle::cancellation_source src;
  src.cancel();
  EXPECT_THROW(heddle::inclusive_scan(in.begin(), in.end(), out.begin(), src.token()), heddle::task_cancelled);
  EXPECT_THROW(heddle::exclusive_scan(rt, in.begin(), in.end(), out.begin(), std::int64_t{0}, src.token()),
               heddle::task_cancelled);
  // Cancelled during the call: the first pass stops and the call throws.
  heddle::cancellation_source during;
  calls = 0;
  EXPECT_THROW(heddle::inclusive_scan(
                   rt, in.begin(), in.end(), out.begin(),
                   [&](std::int64_t a, std::int64_t b) {
                     if (calls++ == 1000) during.cancel();
                     return a + b;
                   },
                   during.token()),
               heddle::task_cancelled);
  EXPECT_LT(calls.load(), static_cast<long>(2 * in.size()));
  // Fine afterwards.
  std::vector<std::int64_t> expect(in.size());
  std::inclusive_scan(in.begin(), in.end(), expect.begin());
  heddle::inclusive_scan(rt, in.begin(), in.end(), out.begin());
  EXPECT_EQ(out, expect);
}

TEST(Scan, StressConcurrentScansFromTasksAndThreads) {
  heddle_test::watchdog dog("Scan.StressConcurrentScansFromTasksAndThreads", std::chrono::seconds(120));
  heddle::runtime rt(4);
  const std::size_t n = heddle_test::scaled<std::size_t>(200'000, 50'000);
  const auto in = input(n);
  std::vector<std::int64_t> expect(n);
  std::inclusive_scan(in.begin(), in.end(), expect.begin());
  for (int round = 0; round < heddle_test::scaled(20, 4); ++round) {
    std::vector<std::int64_t> a(n), b(n), c(n);
    auto t = rt.task([&] { heddle::inclusive_scan(in.begin(), in.end(), a.begin()); });
    std::thread other([&] { heddle::inclusive_scan(rt, in.begin(), in.end(), b.begin()); });
    heddle::inclusive_scan(rt, in.begin(), in.end(), c.begin());
    t.get();
    other.join();
    ASSERT_EQ(a, expect);
    ASSERT_EQ(b, expect);
    ASSERT_EQ(c, expect);
  }
}

}  // namespace
