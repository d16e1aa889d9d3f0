// SPDX-License-Identifier: Apache-2.0
// Shared by the algorithm tests: an exact-coverage counter, a user-defined range, and the runtime
// sizes every algorithm is run with.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <heddle/heddle.hpp>

namespace algo_test {

// One counter per index, so that both a missed and a repeated index show.
class coverage {
 public:
  explicit coverage(std::size_t n) : hits_(new std::atomic<std::uint8_t>[n]), n_(n) {
    for (std::size_t i = 0; i < n; ++i) hits_[i].store(0, std::memory_order_relaxed);
  }
  void hit(std::size_t i) { hits_[i].fetch_add(1, std::memory_order_relaxed); }
  // The first index not hit exactly once, or n.
  std::size_t first_bad() const {
    for (std::size_t i = 0; i < n_; ++i)
      if (hits_[i].load(std::memory_order_relaxed) != 1) return i;
    return n_;
  }
  // How often index i was hit, for a failure's message.
  unsigned at(std::size_t i) const { return hits_[i].load(); }

 private:
  std::unique_ptr<std::atomic<std::uint8_t>[]> hits_;
  std::size_t n_;
};

// A range written by a user against oneTBB's concept only: copy, empty(), is_divisible(), the
// splitting constructor. Splits a third off the top, to be unlike blocked_range's halves.
class thirds_range {
 public:
  thirds_range(std::size_t lo, std::size_t hi) : lo_(lo), hi_(hi) {}
  thirds_range(thirds_range& r, heddle::split) : lo_(r.hi_ - (r.hi_ - r.lo_) / 3), hi_(r.hi_) { r.hi_ = lo_; }
  bool empty() const { return lo_ >= hi_; }
  bool is_divisible() const { return hi_ - lo_ >= 3; }
  std::size_t lo() const { return lo_; }
  std::size_t hi() const { return hi_; }

 private:
  std::size_t lo_, hi_;
};

inline constexpr unsigned worker_counts[] = {1, 2, 4};

}  // namespace algo_test
