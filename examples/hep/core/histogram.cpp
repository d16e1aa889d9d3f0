// SPDX-License-Identifier: Apache-2.0
#include "histogram.hpp"

#include <cmath>
#include <numeric>

#include "seeds.hpp"

namespace hep {

void check(const axis& a, const std::string& name) {
  if (a.bins < 1 || !std::isfinite(a.low) || !std::isfinite(a.high) || !(a.low < a.high))
    throw std::invalid_argument("histogram '" + name + "': bad axis (" + std::to_string(a.bins) + " bins from " +
                                std::to_string(a.low) + " to " + std::to_string(a.high) +
                                "): needs at least one bin and low < high");
}

histogram::histogram(std::string n, std::string t, std::string xl, axis a)
    : name(std::move(n)), title(std::move(t)), xlabel(std::move(xl)), x(a) {
  check(x, name);
  counts.assign(x.bins + 2, 0);
}

std::uint64_t histogram::entries() const noexcept {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

void histogram::add(const histogram& other) {
  if (other.name != name || !(other.x == x) || other.counts.size() != counts.size())
    throw std::invalid_argument("histogram '" + name + "': cannot add histogram '" + other.name + "' of other bins");
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += other.counts[i];
}

std::uint64_t heddle_fw_digest(const histogram& h) noexcept {
  std::uint64_t d = salt(h.name);
  for (std::uint64_t c : h.counts) d = mix(d, c);
  return d;
}

atomic_histogram::atomic_histogram(std::string n, std::string t, std::string xl, axis a)
    : name_(std::move(n)), title_(std::move(t)), xlabel_(std::move(xl)), x_(a) {
  check(x_, name_);
  counts_ = std::make_unique<std::atomic<std::uint64_t>[]>(x_.bins + 2);
  reset();
}

histogram atomic_histogram::snapshot() const {
  histogram h(name_, title_, xlabel_, x_);
  for (std::uint32_t i = 0; i < x_.bins + 2; ++i) h.counts[i] = counts_[i].load(std::memory_order_relaxed);
  return h;
}

void atomic_histogram::reset() noexcept {
  for (std::uint32_t i = 0; i < x_.bins + 2; ++i) counts_[i].store(0, std::memory_order_relaxed);
}

}  // namespace hep
