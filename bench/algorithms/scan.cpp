// scan: inclusive prefix sum of n int64 values: heddle::inclusive_scan against tbb::parallel_scan
// (its functional form over a blocked_range, default auto_partitioner), OpenMP 5's
// `reduction(inscan, +:)` with `#pragma omp scan`, and std::inclusive_scan. Memory-bound: the input
// and the output are n int64 each. Every output checked against the serial one. -> scan_vs_tbb
#include <heddle/heddle.hpp>

#include <tbb/blocked_range.h>
#include <tbb/parallel_scan.h>

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
  p.omp_name = "OpenMP scan(inscan)";
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
  // GCC 12 warns that its own lowering of the inscan reduction may read an uninitialized temporary.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  p.omp = [&](unsigned t) {
    std::int64_t sum = 0;
#pragma omp parallel for num_threads(t) reduction(inscan, + : sum)
    for (std::size_t i = 0; i < n; ++i) {
      sum += src[i];
#pragma omp scan inclusive(sum)
      dst[i] = sum;
    }
  };
#pragma GCC diagnostic pop
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
