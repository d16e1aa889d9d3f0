// SPDX-License-Identifier: Apache-2.0
// The lock workload under std::mutex: the best std::mutex can do, on the producers' own threads
// (std::threads) and on heddle's workers (heddle tasks, as the serial queue's producers run).
#include <heddle/heddle.hpp>

#include <mutex>

#include "threads.hpp"
#include "workload.hpp"

namespace heddle::bench::dispatch {

namespace {
struct alignas(64) padded_mutex {
  std::mutex m;
};

void produce(std::mutex& m, shared_state& s, const lock_params& p, unsigned k) {
  for (std::uint64_t i = p.from(k); i < p.from(k + 1); ++i) {
    std::lock_guard lock(m);
    critical_section(s, i);
  }
}
}  // namespace

double lock_mutex_threads(const lock_params& p, shared_state& s) {
  padded_mutex pm;
  return on_threads(p.producers, [&](unsigned k) { produce(pm.m, s, p, k); });
}

double lock_mutex_heddle(heddle::runtime& rt, const lock_params& p, shared_state& s) {
  padded_mutex pm;
  return rt
      .task([&] {
        const auto t0 = clock::now();
        heddle::parallel_for(
            0u, p.producers, [&](unsigned k) { produce(pm.m, s, p, k); }, 1);
        return seconds(clock::now() - t0);
      })
      .get();
}

}  // namespace heddle::bench::dispatch
