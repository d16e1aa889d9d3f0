// SPDX-License-Identifier: Apache-2.0
// Per-worker accumulation: a 256-bin histogram of n hashed indices, each thread filling its own
// copy, folded at the end. heddle::per_worker in heddle::parallel_for against oneTBB's
// enumerable_thread_specific in tbb::parallel_for, OpenMP's array reduction, and a serial loop.
// Each parallel body takes its thread's histogram once per piece of work (oneTBB: per subrange;
// heddle: per chunk of `chunk` indices, the pieces of the index-form parallel_for; OpenMP: once
// per thread), so the cost measured is the loop, the local() calls and the combine.
#include <array>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <omp.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <heddle/heddle.hpp>

#include "experiment.hpp"
#include "heddle_runtimes.hpp"
#include "report.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench::algorithms {

namespace per_worker_experiment {
namespace {

constexpr std::size_t bins = 256;
constexpr std::size_t chunk = 16384;  // indices per heddle::parallel_for iteration
using histogram = std::array<std::uint64_t, bins>;

// A well-mixed bin for index i (the finaliser of splitmix64, top 8 bits).
inline std::size_t bin_of(std::uint64_t i) noexcept {
  std::uint64_t x = i * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  return static_cast<std::size_t>(x >> 56);
}

inline void fill(histogram& h, std::size_t lo, std::size_t hi) noexcept {
  for (std::size_t i = lo; i < hi; ++i) ++h[bin_of(i)];
}

histogram add(histogram a, const histogram& b) noexcept {
  for (std::size_t k = 0; k < bins; ++k) a[k] += b[k];
  return a;
}

histogram run_serial(std::size_t n) {
  histogram h{};
  fill(h, 0, n);
  return h;
}

histogram run_heddle(heddle::runtime& rt, std::size_t n) {
  return rt.execute([&] {
    heddle::per_worker<histogram> local(histogram{});
    const std::size_t chunks = (n + chunk - 1) / chunk;
    heddle::parallel_for(std::size_t{0}, chunks,
                         [&](std::size_t c) { fill(local.local(), c * chunk, std::min(n, (c + 1) * chunk)); });
    return local.combine(add);
  });
}

histogram run_tbb(tbb::task_arena& arena, std::size_t n) {
  return arena.execute([&] {
    tbb::enumerable_thread_specific<histogram> local(histogram{});
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n),
                      [&](const tbb::blocked_range<std::size_t>& r) { fill(local.local(), r.begin(), r.end()); });
    return local.combine(add);
  });
}

histogram run_omp(std::size_t n, unsigned threads) {
  histogram h{};
  std::uint64_t* p = h.data();
#pragma omp parallel num_threads(threads)
  {
    histogram mine{};
#pragma omp for schedule(static) nowait
    for (std::size_t i = 0; i < n; ++i) ++mine[bin_of(i)];
    for (std::size_t k = 0; k < bins; ++k) {
#pragma omp atomic
      p[k] += mine[k];
    }
  }
  return h;
}

void check(const histogram& got, const histogram& want, const std::string& who) {
  for (std::size_t k = 0; k < bins; ++k)
    if (got[k] != want[k])
      throw std::runtime_error("per_worker: " + who + " counted " + std::to_string(got[k]) + " in bin " +
                               std::to_string(k) + ", serial " + std::to_string(want[k]));
}

void run(const options& opt, nlohmann::json& report) {
  const std::size_t n = opt.pick<std::size_t>(100'000, 10'000'000, 100'000'000, 1'000'000'000);
  const auto threads = opt.threads_or({1, 2, 4});
  std::printf("## per_worker: a %zu-bin histogram of %zu hashed indices, a histogram per thread, then "
              "combined; %d interleaved repetitions after a warm-up %s\n\n",
              bins, n, opt.reps, opt.scale_name());
  const histogram want = run_serial(n);
  std::uint64_t total = 0;
  for (auto c : want) total += c;
  if (total != n) throw std::runtime_error("per_worker: the serial histogram does not count every index");

  heddle_runtimes runtimes(threads);
  tbb_arenas arenas(threads);
  const char* heddle_name = "heddle per_worker";
  const char* tbb_name = "oneTBB enumerable_thread_specific";
  const char* omp_name = "OpenMP per-thread + atomic merge";
  std::vector<variant> vs;
  auto timed_check = [&](auto f, std::string who) {
    return [f, who, &want]() {
      const auto t0 = std::chrono::steady_clock::now();
      const histogram h = f();
      const auto t1 = std::chrono::steady_clock::now();
      check(h, want, who);
      return std::chrono::duration<double>(t1 - t0).count();
    };
  };
  vs.push_back({"serial", 1, {}, timed_check([n] { return run_serial(n); }, "serial")});
  for (unsigned t : threads) {
    const std::string at = " at " + std::to_string(t);
    vs.push_back(
        {heddle_name, t, {}, timed_check([&rt = runtimes[t], n] { return run_heddle(rt, n); }, heddle_name + at)});
    vs.push_back({tbb_name, t, {}, timed_check([&a = arenas[t], n] { return run_tbb(a, n); }, tbb_name + at)});
    vs.push_back({omp_name, t, {}, timed_check([n, t] { return run_omp(n, t); }, omp_name + at)});
  }
  const auto rs = run_interleaved(vs, opt.check ? 1 : opt.reps);
  std::printf("%s\n", markdown_table(rs, tbb_name).c_str());

  const unsigned head = headline_threads(threads);
  auto ratio = [&](const char* peer, unsigned t) { return paired_ratio(find(rs, heddle_name, t), find(rs, peer, t)); };
  auto plural = [](unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  add_figure(report, "per_worker_vs_tbb", ratio(tbb_name, head),
             "heddle per_worker / oneTBB enumerable_thread_specific, per round, " + plural(head) +
                 " (most without oversubscription)",
             at_most(1.0));
  add_figure(report, "per_worker_vs_omp", ratio(omp_name, head),
             "heddle per_worker / OpenMP per-thread histograms, per round, " + plural(head) +
                 " (most without oversubscription)",
             at_most(1.0));
  for (unsigned t : threads) {
    const std::string ts = std::to_string(t) + "t";
    add_figure(report, "per_worker_" + ts + "_vs_tbb", ratio(tbb_name, t),
               "heddle per_worker / oneTBB enumerable_thread_specific, per round, " + plural(t));
    add_figure(report, "per_worker_" + ts + "_vs_omp", ratio(omp_name, t),
               "heddle per_worker / OpenMP per-thread histograms, per round, " + plural(t));
  }
  add_suite(report, "per_worker", rs, {{"n", n}, {"bins", bins}, {"heddle_chunk", chunk}, {"reps", opt.reps}});
}

const experiment_registration reg{{"per_worker", 70, &run}};

}  // namespace
}  // namespace per_worker_experiment

}  // namespace heddle::bench::algorithms
