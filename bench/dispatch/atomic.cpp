// SPDX-License-Identifier: Apache-2.0
// The floor under a group's enter()+leave(): the same two atomic read-modify-writes on a bare
// counter (a relaxed add, then an acq_rel sub), with nothing checked and nothing to notify.
#include <atomic>
#include <stdexcept>
#include <string>

#include "threads.hpp"
#include "workload.hpp"

namespace heddle::bench::dispatch {

namespace {
struct alignas(64) counter {
  std::atomic<std::uint64_t> v{0};
};
void pairs(counter& c, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    c.v.fetch_add(1, std::memory_order_relaxed);
    c.v.fetch_sub(1, std::memory_order_acq_rel);
  }
}
void check_zero(const counter& c, const char* who) {
  if (const auto v = c.v.load(); v != 0) throw std::runtime_error(std::string(who) + ": ended at " + std::to_string(v));
}
}  // namespace

double atomic_pairs(std::uint64_t n) {
  counter c;
  const auto t0 = clock::now();
  pairs(c, n);
  const double s = seconds(clock::now() - t0);
  check_zero(c, "atomic pairs");
  return s;
}

double atomic_pairs_contended(unsigned threads, std::uint64_t n_per_thread) {
  counter c;
  const double s = on_threads(threads, [&](unsigned) { pairs(c, n_per_thread); });
  check_zero(c, "atomic pairs, contended");
  return s;
}

}  // namespace heddle::bench::dispatch
