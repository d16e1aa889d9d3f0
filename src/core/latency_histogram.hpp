// SPDX-License-Identifier: Apache-2.0
// Successor latencies: a log-linear histogram, with count, sum and max. Values below 16 ns have a
// bucket each; above, each power of two [2^e, 2^(e+1)) is cut into 8 buckets of width 2^(e-3). A
// percentile reads as its bucket's midpoint (at most the largest value seen), which is at most half a
// width, 2^(e-4), from any value v in the bucket: within v / 16, 6.25 % (the bound that
// tests/core/latency_histogram_test.cpp checks, and heddle/core/stats.hpp and docs/async.md state).
// Written by several threads at once with relaxed atomic adds; each runtime keeps one set per
// worker and one for every other thread, so writers rarely share a cache line.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "heddle/core/stats.hpp"

namespace heddle::core_detail {

class latency_histogram {
 public:
  static constexpr std::size_t sub_buckets = 8;
  static constexpr std::size_t num_buckets = 16 + (64 - 4) * sub_buckets;

  void record(std::uint64_t ns) noexcept {
    buckets_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(ns, std::memory_order_relaxed);
    std::uint64_t m = max_.load(std::memory_order_relaxed);
    while (ns > m && !max_.compare_exchange_weak(m, ns, std::memory_order_relaxed)) {
    }
  }

  // Sums several histograms (a runtime's per-thread ones) into a summary.
  class merged {
   public:
    void add(const latency_histogram& h) noexcept {
      for (std::size_t i = 0; i < num_buckets; ++i) buckets_[i] += h.buckets_[i].load(std::memory_order_relaxed);
      count_ += h.count_.load(std::memory_order_relaxed);
      sum_ += h.sum_.load(std::memory_order_relaxed);
      max_ = std::max(max_, h.max_.load(std::memory_order_relaxed));
    }
    latency_summary summary() const noexcept {
      latency_summary s;
      s.count = count_;
      if (count_ == 0) return s;
      s.mean_ns = static_cast<double>(sum_) / static_cast<double>(count_);
      s.max_ns = max_;
      s.p50_ns = percentile(0.50);
      s.p99_ns = percentile(0.99);
      return s;
    }

   private:
    std::uint64_t percentile(double q) const noexcept {
      // The smallest value with at least q of the samples at or below it.
      const auto nth = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1)) + 1;
      std::uint64_t seen = 0;
      for (std::size_t i = 0; i < num_buckets; ++i) {
        seen += buckets_[i];
        if (seen >= nth) return std::min(midpoint(i), max_);
      }
      return max_;
    }
    std::array<std::uint64_t, num_buckets> buckets_{};
    std::uint64_t count_ = 0, sum_ = 0, max_ = 0;
  };

  static std::size_t bucket_of(std::uint64_t v) noexcept {
    if (v < 16) return static_cast<std::size_t>(v);
    const unsigned e = static_cast<unsigned>(std::bit_width(v)) - 1;  // 4..63
    const std::uint64_t sub = (v >> (e - 3)) & (sub_buckets - 1);
    return 16 + (e - 4) * sub_buckets + static_cast<std::size_t>(sub);
  }
  static std::uint64_t midpoint(std::size_t i) noexcept {
    if (i < 16) return i;
    const unsigned e = static_cast<unsigned>((i - 16) / sub_buckets) + 4;
    const std::uint64_t sub = (i - 16) % sub_buckets;
    const std::uint64_t width = std::uint64_t{1} << (e - 3);
    return ((sub_buckets + sub) << (e - 3)) + width / 2;
  }

 private:
  std::array<std::atomic<std::uint64_t>, num_buckets> buckets_{};
  std::atomic<std::uint64_t> count_{0}, sum_{0}, max_{0};
};

// One histogram per strategy.
using latency_set = std::array<latency_histogram, strategy_count>;

}  // namespace heddle::core_detail
