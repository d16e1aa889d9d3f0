// SPDX-License-Identifier: Apache-2.0
#include "harness.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <thread>

namespace heddle::bench {

namespace {
// The median of v; sorts v.
double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

double result::median() const {
  auto s = samples;
  return median_of(s);
}
double result::min() const { return *std::min_element(samples.begin(), samples.end()); }
double result::max() const { return *std::max_element(samples.begin(), samples.end()); }

std::vector<result> run_interleaved(std::vector<variant>& variants, int reps) {
  std::vector<result> rs;
  for (auto& v : variants) {
    v.run();
    rs.push_back({v.name, v.threads, v.config, {}});
  }
  // A runtime's threads stay busy for a while after its run ends (oneTBB's idle workers spin and
  // yield, libgomp's spin), and slow down whatever runs next: in a fixed order one variant always
  // pays for its predecessor (measured: a 2x swing in the stats suite's 2-thread ratios when heddle
  // and oneTBB swapped places). So each round runs the variants in a new order (a seeded shuffle,
  // the same on every run of the program), each after a short pause that lets the previous one's
  // threads go idle.
  std::vector<std::size_t> order(variants.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 rng(20261123);
  for (int r = 0; r < reps; ++r) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    for (std::size_t i : order) {
      std::this_thread::sleep_for(settle_time);
      rs[i].samples.push_back(variants[i].run());
    }
  }
  return rs;
}

estimate median_with_interval(std::vector<double> per_round) {
  if (per_round.empty()) throw std::logic_error("heddle-bench: an estimate of no rounds");
  constexpr int resamples = 10000;
  std::mt19937_64 rng(20261125);
  const std::size_t n = per_round.size();
  std::vector<double> draw(n), medians(resamples);
  for (double& m : medians) {
    for (double& x : draw) x = per_round[rng() % n];
    m = median_of(draw);
  }
  std::sort(medians.begin(), medians.end());
  // Nearest rank: the 250th and the 9,750th of 10,000.
  const double lo = medians[resamples * 25 / 1000 - 1], hi = medians[resamples * 975 / 1000 - 1];
  return {median_of(per_round), lo, hi, static_cast<int>(n)};
}

unsigned headline_threads(const std::vector<unsigned>& threads) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  unsigned best = 0;
  for (unsigned t : threads)
    if (t <= cores) best = std::max(best, t);
  return best ? best : *std::min_element(threads.begin(), threads.end());
}

const result& find(const std::vector<result>& rs, const std::string& name, unsigned threads,
                   const std::string& config) {
  for (auto& r : rs)
    if (r.name == name && r.threads == threads && r.config == config) return r;
  throw std::logic_error("heddle-bench: no result for " + name + " at " + std::to_string(threads) + " threads" +
                         (config.empty() ? "" : " (" + config + ")"));
}

}  // namespace heddle::bench
