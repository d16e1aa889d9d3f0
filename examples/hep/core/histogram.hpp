// SPDX-License-Identifier: Apache-2.0
// One-dimensional histograms of counts, fixed bins. `histogram` is the value: a product (a
// luminosity block's histograms), merged with add(). `atomic_histogram` is where many threads fill
// at once without a lock: each bin is an atomic counter, a fill one relaxed increment, so events
// of one luminosity block fill it concurrently and nothing waits; snapshot() reads it out once the
// block's events are done.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hep {

// The bins: `bins` of equal width over [low, high), plus an underflow (index 0) and an overflow
// (index bins + 1) bin. NaN counts as overflow.
struct axis {
  std::uint32_t bins = 1;
  double low = 0, high = 1;

  // The bin of x, 0 .. bins + 1. Constant time.
  std::uint32_t index(double x) const noexcept {
    if (x < low) return 0;
    if (!(x < high)) return bins + 1;
    const auto i = static_cast<std::uint32_t>((x - low) / (high - low) * bins);
    return 1 + (i < bins ? i : bins - 1);
  }
  friend bool operator==(const axis&, const axis&) = default;
};

// Throws std::invalid_argument unless bins >= 1 and low < high (both finite).
void check(const axis& a, const std::string& name);

struct histogram {
  std::string name, title, xlabel;
  axis x;
  std::vector<std::uint64_t> counts;  // bins + 2

  histogram() = default;
  histogram(std::string name, std::string title, std::string xlabel, axis x);  // zero counts; check(x)

  void fill(double value) noexcept { ++counts[x.index(value)]; }
  std::uint64_t entries() const noexcept;  // every fill, under- and overflow included
  // Adds `other`'s counts. std::invalid_argument naming both if the names or axes differ.
  void add(const histogram& other);
};
std::uint64_t heddle_fw_digest(const histogram& h) noexcept;

class atomic_histogram {
 public:
  atomic_histogram(std::string name, std::string title, std::string xlabel, axis x);  // check(x)

  // Thread-safe, lock-free: one relaxed atomic increment.
  void fill(double value) noexcept { counts_[x_.index(value)].fetch_add(1, std::memory_order_relaxed); }
  // The counts as a histogram. Exact once the fills it must include happened before the call
  // (the framework orders a block's events before its end transition); concurrent fills may or may
  // not be counted.
  histogram snapshot() const;
  // Zero counts (not concurrently with fills).
  void reset() noexcept;
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_, title_, xlabel_;
  axis x_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
};

}  // namespace hep
