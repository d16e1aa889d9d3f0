// SPDX-License-Identifier: Apache-2.0
// reduce: three reductions, heddle against oneTBB's same-named call, OpenMP's reduction(+:) where it
// applies, and serial.
//   map-reduce    sum of sin(x)·exp(-x²) over n points: compute-bound         -> reduce_vs_tbb
//   sum           sum of 10^8 doubles from memory: memory-bound              -> reduce_sum_vs_tbb
//   deterministic the same sum with parallel_deterministic_reduce (simple     -> det_reduce_vs_tbb
//                 partitioner, grain 2^16); must be bitwise equal to the serial evaluation of the same
//                 split tree at every thread count (OpenMP has no such reduction: no column)
#include <heddle/heddle.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment.hpp"
#include "loop_peers.hpp"

namespace heddle::bench::algorithms {

namespace reduce_experiment {
namespace {

inline double point(std::size_t i, std::size_t n) {
  const double x = 2.0 * double(i) / double(n);  // [0, 2): the sum does not cancel out
  return std::sin(3.0 * x) * std::exp(-x * x);
}

double map_chunk(std::size_t lo, std::size_t hi, std::size_t n, double acc) {
  for (std::size_t i = lo; i < hi; ++i) acc += point(i, n);
  return acc;
}

double sum_chunk(const double* v, std::size_t lo, std::size_t hi, double acc) {
  for (std::size_t i = lo; i < hi; ++i) acc += v[i];
  return acc;
}

// The serial value of the deterministic split tree: blocked_range's halving down to the grain,
// leaves summed from 0, joined left + right. heddle's and oneTBB's deterministic reductions both
// evaluate exactly this.
double tree_sum(const double* v, std::size_t lo, std::size_t hi, std::size_t grain) {
  if (hi - lo <= grain) return sum_chunk(v, lo, hi, 0.0);
  const std::size_t mid = lo + (hi - lo) / 2;
  const double left = tree_sum(v, lo, mid, grain);
  return left + tree_sum(v, mid, hi, grain);
}

void expect_close(const std::string& what, const std::string& who, double got, double want, double tol) {
  if (!(std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want))))
    throw std::runtime_error(what + ": " + who + " got " + std::to_string(got) + ", serial " + std::to_string(want));
}

using hrange = heddle::blocked_range<std::size_t>;
using trange = tbb::blocked_range<std::size_t>;

void run_map_reduce(const options& opt, nlohmann::json& report, const std::vector<unsigned>& threads) {
  const std::size_t n = opt.pick<std::size_t>(10'000, 2'000'000, 20'000'000, 100'000'000);
  std::printf(
      "## reduce, map-reduce: sum of sin(3x)·exp(-x²), x in [0, 2), at %zu points (compute-bound), %d interleaved "
      "repetitions after a warm-up %s\n\n",
      n, opt.reps, opt.scale_name());
  const double want = map_chunk(0, n, n, 0.0);
  double got = 0;
  peer_program p;
  p.tbb_name = "oneTBB parallel_reduce";
  p.omp_name = "OpenMP reduction(+)";
  p.serial = [&] { got = map_chunk(0, n, n, 0.0); };
  p.heddle = [&] {
    got = heddle::parallel_reduce(
        hrange(0, n), 0.0, [n](const hrange& r, double acc) { return map_chunk(r.begin(), r.end(), n, acc); },
        std::plus<>{});
  };
  p.tbb = [&] {
    got = tbb::parallel_reduce(
        trange(0, n), 0.0, [n](const trange& r, double acc) { return map_chunk(r.begin(), r.end(), n, acc); },
        std::plus<>{});
  };
  p.omp = [&](unsigned t) {
    double s = 0;
#pragma omp parallel for num_threads(t) reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += point(i, n);
    got = s;
  };
  p.check = [&](const std::string& who) { expect_close("reduce map-reduce", who, got, want, 1e-9); };
  run_and_report(opt, report, threads, p, "reduce", {{"n", n}, {"kind", "map-reduce, compute-bound"}});
}

void run_sum(const options& opt, nlohmann::json& report, const std::vector<unsigned>& threads,
             const std::vector<double>& v) {
  const std::size_t n = v.size();
  std::printf("## reduce, sum: %zu doubles from memory (memory-bound), %d interleaved repetitions after a "
              "warm-up %s\n\n",
              n, opt.reps, opt.scale_name());
  const double* d = v.data();
  const double want = sum_chunk(d, 0, n, 0.0);
  double got = 0;
  peer_program p;
  p.tbb_name = "oneTBB parallel_reduce";
  p.omp_name = "OpenMP reduction(+)";
  p.serial = [&] { got = sum_chunk(d, 0, n, 0.0); };
  p.heddle = [&] {
    got = heddle::parallel_reduce(
        hrange(0, n), 0.0, [d](const hrange& r, double acc) { return sum_chunk(d, r.begin(), r.end(), acc); },
        std::plus<>{});
  };
  p.tbb = [&] {
    got = tbb::parallel_reduce(
        trange(0, n), 0.0, [d](const trange& r, double acc) { return sum_chunk(d, r.begin(), r.end(), acc); },
        std::plus<>{});
  };
  p.omp = [&](unsigned t) {
    double s = 0;
#pragma omp parallel for num_threads(t) reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += d[i];
    got = s;
  };
  p.check = [&](const std::string& who) { expect_close("reduce sum", who, got, want, 1e-9); };
  run_and_report(opt, report, threads, p, "reduce_sum", {{"n", n}, {"kind", "sum of doubles, memory-bound"}});
}

void run_deterministic(const options& opt, nlohmann::json& report, const std::vector<unsigned>& threads,
                       const std::vector<double>& v) {
  const std::size_t n = v.size();
  const std::size_t grain = opt.pick<std::size_t>(64, 1 << 16, 1 << 16, 1 << 16);
  std::printf("## reduce, deterministic: the same %zu doubles with parallel_deterministic_reduce, simple "
              "partitioner, grain %zu; every result bitwise equal to the serial tree's %s\n\n",
              n, grain, opt.scale_name());
  const double* d = v.data();
  const double want = tree_sum(d, 0, n, grain);
  double got = 0;
  peer_program p;
  p.tbb_name = "oneTBB parallel_deterministic_reduce";
  p.serial = [&] { got = tree_sum(d, 0, n, grain); };
  p.heddle = [&] {
    got = heddle::parallel_deterministic_reduce(
        hrange(0, n, grain), 0.0, [d](const hrange& r, double acc) { return sum_chunk(d, r.begin(), r.end(), acc); },
        std::plus<>{});
  };
  p.tbb = [&] {
    got = tbb::parallel_deterministic_reduce(
        trange(0, n, grain), 0.0, [d](const trange& r, double acc) { return sum_chunk(d, r.begin(), r.end(), acc); },
        std::plus<>{});
  };
  p.check = [&](const std::string& who) {
    if (std::memcmp(&got, &want, sizeof got) != 0)
      throw std::runtime_error("reduce deterministic: " + who + " got " + std::to_string(got) +
                               ", not bitwise equal to the serial tree's " + std::to_string(want));
  };
  run_and_report(opt, report, threads, p, "det_reduce",
                 {{"n", n}, {"grain", grain}, {"kind", "deterministic sum, bitwise equal at every thread count"}});
}

void run(const options& opt, nlohmann::json& report) {
  const auto threads = opt.threads_or({1, 2, 4});
  run_map_reduce(opt, report, threads);
  const std::size_t n = opt.pick<std::size_t>(100'000, 10'000'000, 100'000'000, 100'000'000);
  std::vector<double> v(n);
  // Values of very different magnitudes: any change in the grouping of the sum changes its last bits.
  for (std::size_t i = 0; i < n; ++i) v[i] = std::ldexp(double(i % 1000) - 499.5, int(i % 41) - 20);
  run_sum(opt, report, threads, v);
  run_deterministic(opt, report, threads, v);
}

const experiment_registration reg{{"reduce", 20, &run}};

}  // namespace
}  // namespace reduce_experiment

}  // namespace heddle::bench::algorithms
