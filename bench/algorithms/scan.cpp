// SPDX-License-Identifier: Apache-2.0
// scan: inclusive prefix sum of n int64 values: heddle::inclusive_scan against tbb::parallel_scan
// (its functional form over a blocked_range, default auto_partitioner), OpenMP's fastest form of
// it, a two-pass blocked scan in one parallel region, and std::inclusive_scan. Memory-bound: the
// input and the output are n int64 each. Every output checked against the serial one.
// -> scan_vs_tbb, scan_vs_omp
//
// OpenMP 5's own construct, `reduction(inscan, +:)` with `#pragma omp scan`, is not the peer: as g++
// 12 and libgomp 12 compile it, it took 3.6 × std::inclusive_scan's time at one thread and about 2 ×
// at two (docs/algorithms.md). A programmer who wants a fast scan from OpenMP writes the blocks by
// hand, as below.
#include <heddle/heddle.hpp>

#include <omp.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_scan.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiment.hpp"
#include "loop_peers.hpp"

namespace heddle::bench::algorithms {

namespace scan_experiment {
namespace {

void run(const options& opt, nlohmann::json& report) {
  const auto threads = opt.threads_or({1, 2, 4});
  const std::size_t n = opt.pick<std::size_t>(100'000, 10'000'000, 100'000'000, 100'000'000);
  std::printf("## scan: inclusive prefix sum of %zu int64 (memory-bound), %d interleaved repetitions after a "
              "warm-up %s\n\n",
              n, opt.reps, opt.scale_name());
  std::vector<std::int64_t> in(n), out(n), want(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = std::int64_t((i * 2654435761u) % 1999) - 999;
  std::inclusive_scan(in.begin(), in.end(), want.begin());
  const std::int64_t* src = in.data();
  std::int64_t* dst = out.data();

  peer_program p;
  p.tbb_name = "oneTBB parallel_scan";
  p.omp_name = "OpenMP two-pass blocked scan";
  p.prepare = [&] { std::memset(dst, 0, n * sizeof *dst); };
  p.serial = [&] { std::inclusive_scan(src, src + n, dst); };
  p.heddle = [&] { heddle::inclusive_scan(src, src + n, dst); };
  p.tbb = [&] {
    tbb::parallel_scan(
        tbb::blocked_range<std::size_t>(0, n), std::int64_t{0},
        [src, dst](const tbb::blocked_range<std::size_t>& r, std::int64_t sum, bool is_final) {
          if (is_final) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) dst[i] = sum += src[i];
          } else {
            for (std::size_t i = r.begin(); i != r.end(); ++i) sum += src[i];
          }
          return sum;
        },
        std::plus<>{});
  };
  // Thread k of the team owns the k-th of `team` equal contiguous blocks. Pass 1: each thread sums
  // its block into sums[k + 1]; one thread turns sums into exclusive offsets (sums[k] = the total of
  // the blocks before k); pass 2: each thread scans its block from its offset. The last block's
  // total is needed by no one, so its thread skips pass 1: at one thread the scan is one pass, as
  // the serial one. sums is made once, outside the timed runs.
  std::vector<std::int64_t> sums(*std::max_element(threads.begin(), threads.end()) + 1);
  p.omp = [&](unsigned t) {
    std::int64_t* offset = sums.data();
#pragma omp parallel num_threads(t)
    {
      const std::size_t k = std::size_t(omp_get_thread_num()), team = std::size_t(omp_get_num_threads());
      const std::size_t lo = n * k / team, hi = n * (k + 1) / team;
      if (k + 1 < team) {
        std::int64_t sum = 0;
        for (std::size_t i = lo; i < hi; ++i) sum += src[i];
        offset[k + 1] = sum;
      }
#pragma omp barrier
#pragma omp single
      {
        offset[0] = 0;
        for (std::size_t j = 1; j < team; ++j) offset[j] += offset[j - 1];
      }  // single's implied barrier: every offset is ready
      std::int64_t sum = offset[k];
      for (std::size_t i = lo; i < hi; ++i) dst[i] = sum += src[i];
    }
  };
  p.check = [&](const std::string& who) {
    if (std::memcmp(dst, want.data(), n * sizeof *dst) != 0) {
      std::size_t i = 0;
      while (dst[i] == want[i]) ++i;
      throw std::runtime_error("scan: " + who + " differs from serial at " + std::to_string(i) + ": " +
                               std::to_string(dst[i]) + " vs " + std::to_string(want[i]));
    }
  };
  run_and_report(opt, report, threads, p, "scan", {{"n", n}, {"type", "int64"}});
}

const experiment_registration reg{{"scan", 30, &run}};

}  // namespace
}  // namespace scan_experiment

}  // namespace heddle::bench::algorithms
