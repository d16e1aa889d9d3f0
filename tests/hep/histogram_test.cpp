// SPDX-License-Identifier: Apache-2.0
// hep::histogram and hep::atomic_histogram: binning, merging, and concurrent fills without a lock
// counting every fill exactly (a stress test: run under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/histogram.hpp"

namespace {

TEST(Histogram, BinsUnderAndOverflow) {
  const hep::axis a{4, 0, 2};
  EXPECT_EQ(a.index(-0.1), 0u);
  EXPECT_EQ(a.index(0.0), 1u);
  EXPECT_EQ(a.index(0.49), 1u);
  EXPECT_EQ(a.index(0.5), 2u);
  EXPECT_EQ(a.index(1.999), 4u);
  EXPECT_EQ(a.index(2.0), 5u);
  EXPECT_EQ(a.index(std::numeric_limits<double>::quiet_NaN()), 5u);
  hep::histogram h("x", "t", "x [GeV]", a);
  for (double v : {-1.0, 0.2, 0.3, 1.5, 7.0}) h.fill(v);
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{1, 2, 0, 0, 1, 1}));
  EXPECT_EQ(h.entries(), 5u);
}

TEST(Histogram, AddsOnlyTheSameBins) {
  hep::histogram a("x", "", "", {2, 0, 1}), b("x", "", "", {2, 0, 1}), c("x", "", "", {3, 0, 1}),
      d("y", "", "", {2, 0, 1});
  a.fill(0.1);
  b.fill(0.1);
  b.fill(0.9);
  a.add(b);
  EXPECT_EQ(a.counts, (std::vector<std::uint64_t>{0, 2, 1, 0}));
  EXPECT_THROW(a.add(c), std::invalid_argument);
  EXPECT_THROW(a.add(d), std::invalid_argument);
  EXPECT_THROW(hep::histogram("bad", "", "", {0, 0, 1}), std::invalid_argument);
  EXPECT_THROW(hep::histogram("bad", "", "", {2, 1, 1}), std::invalid_argument);
}

TEST(AtomicHistogram, ConcurrentFillsCountEveryOne) {
#ifdef HEDDLE_TEST_SANITIZED
  constexpr int per_thread = 20000;
#else
  constexpr int per_thread = 400000;
#endif
  constexpr int threads = 4;
  hep::atomic_histogram h("x", "t", "x", {10, 0, 10});
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&h, t] {
      // Thread t fills value (i + t) % 12 - 1: every bin, under- and overflow included, evenly.
      for (int i = 0; i < per_thread; ++i) h.fill(static_cast<double>((i + t) % 12) - 0.5);
    });
  for (std::thread& t : pool) t.join();
  const hep::histogram s = h.snapshot();
  EXPECT_EQ(s.entries(), std::uint64_t{threads} * per_thread);
  std::vector<std::uint64_t> expected(12, 0);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < per_thread; ++i) ++expected[s.x.index(static_cast<double>((i + t) % 12) - 0.5)];
  EXPECT_EQ(s.counts, expected);
  h.reset();
  EXPECT_EQ(h.snapshot().entries(), 0u);
}

}  // namespace
