// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace heddle::bench::stats {

namespace {
// A uniform double in (0, 1] from 53 random bits: portable, unlike std::uniform_real_distribution.
double uniform_open0(std::mt19937_64& rng) { return (double(rng() >> 11) + 1.0) * 0x1.0p-53; }
}  // namespace

workload::workload(distribution d, shape s, double mean, std::size_t tasks, std::uint64_t seed)
    : dist(d), form(s), mean_ns(mean), duration_ns(tasks), ran(tasks, 0) {
  std::mt19937_64 rng(seed);
  const double pareto_scale = mean * (pareto_alpha - 1) / pareto_alpha;
  for (auto& ns : duration_ns) {
    const double u = uniform_open0(rng);
    const double x = d == distribution::exponential ? -mean * std::log(u)
                                                    : pareto_scale / std::pow(u, 1 / pareto_alpha);
    ns = std::llround(x);
    total_ns += ns;
  }
}

unsigned workload::depth() const {
  unsigned d = 0;
  for (std::size_t i = size() - 1; i > 0; i = (i - 1) / 4) ++d;
  return d;
}

void workload::check_and_reset(const std::string& who) {
  for (std::size_t i = 0; i < ran.size(); ++i)
    if (ran[i] != 1)
      throw std::runtime_error("stats " + name() + ": " + who + " ran task " + std::to_string(i) + " " +
                               std::to_string(ran[i]) + " times, not once");
  std::fill(ran.begin(), ran.end(), 0u);
}

std::string mean_label(double mean_ns) {
  char s[32];
  if (mean_ns < 1000) std::snprintf(s, sizeof s, "%gns", mean_ns);
  else std::snprintf(s, sizeof s, "%gus", mean_ns / 1000);
  return s;
}

std::string workload::name() const {
  return std::string(dist == distribution::exponential ? "exp" : "pareto") +
         (form == shape::loop ? " loop " : " tree ") + mean_label(mean_ns);
}

namespace {
void tree_serial(workload& w, std::size_t i) {
  const std::size_t n = w.size();
  for (unsigned k = 0; k < 2; ++k)
    if (w.child(i, k) < n) tree_serial(w, w.child(i, k));
  w.run_task(i);
  for (unsigned k = 2; k < 4; ++k)
    if (w.child(i, k) < n) tree_serial(w, w.child(i, k));
}
}  // namespace

void run_serial(workload& w) {
  if (w.form == shape::loop)
    for (std::size_t i = 0; i < w.size(); ++i) w.run_task(i);
  else tree_serial(w, 0);
}

}  // namespace heddle::bench::stats
