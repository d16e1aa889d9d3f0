// SPDX-License-Identifier: Apache-2.0
// for2d: a 2-D five-point Jacobi stencil, several sweeps over an n×n grid of doubles, each sweep one
// parallel loop over the interior as a blocked_range2d: heddle::parallel_for against
// tbb::parallel_for with the same range and grains (both with their default auto_partitioner),
// OpenMP's `parallel for collapse(2)` over the grain-sized tiles, and serial. Every variant runs the
// same kernel, sweep_block, on rectangles of the grid: the same work, only the way it is divided
// and scheduled differs. Memory-bound: two grids of n² doubles.
#include <heddle/heddle.hpp>

#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "experiment.hpp"
#include "loop_peers.hpp"

namespace heddle::bench::algorithms {

namespace for2d_experiment {
namespace {

constexpr int row_grain = 4, col_grain = 256;

struct grid {
  int n;
  std::vector<double> a, b;
  explicit grid(int n) : n(n), a(std::size_t(n) * n), b(std::size_t(n) * n) {}
  void reset() {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) a[std::size_t(i) * n + j] = double((i * 7 + j * 13) % 101) / 101.0;
    b = a;  // the boundary stays fixed in both
  }
};

// out = the 5-point average of in over rows [r0, r1) and columns [c0, c1) of the interior.
inline void sweep_block(const double* in, double* out, int n, int r0, int r1, int c0, int c1) {
  for (int i = r0; i < r1; ++i) {
    const double* up = in + std::size_t(i - 1) * n;
    const double* mid = in + std::size_t(i) * n;
    const double* down = in + std::size_t(i + 1) * n;
    double* o = out + std::size_t(i) * n;
    for (int j = c0; j < c1; ++j) o[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
  }
}

void run(const options& opt, nlohmann::json& report) {
  const int n = opt.pick(64, 1024, 4096, 8192);
  const int sweeps = opt.pick(2, 10, 10, 10);
  const auto threads = opt.threads_or({1, 2, 4});
  std::printf("## for2d: 5-point Jacobi stencil, %d×%d doubles, %d sweeps, blocked_range2d grains %d×%d, "
              "%d interleaved repetitions after a warm-up %s\n\n",
              n, n, sweeps, row_grain, col_grain, opt.reps, opt.scale_name());
  grid g(n), want(n);
  want.reset();
  for (int s = 0; s < sweeps; ++s) {
    sweep_block(want.a.data(), want.b.data(), n, 1, n - 1, 1, n - 1);
    std::swap(want.a, want.b);
  }

  peer_program p;
  p.tbb_name = "oneTBB parallel_for";
  p.omp_name = "OpenMP collapse(2) tiles";
  p.prepare = [&] { g.reset(); };
  p.serial = [&] {
    for (int s = 0; s < sweeps; ++s) {
      sweep_block(g.a.data(), g.b.data(), n, 1, n - 1, 1, n - 1);
      std::swap(g.a, g.b);
    }
  };
  p.heddle = [&] {
    for (int s = 0; s < sweeps; ++s) {
      const double* in = g.a.data();
      double* out = g.b.data();
      heddle::parallel_for(heddle::blocked_range2d<int>(1, n - 1, row_grain, 1, n - 1, col_grain),
                           [=](const heddle::blocked_range2d<int>& r) {
                             sweep_block(in, out, n, r.rows().begin(), r.rows().end(), r.cols().begin(),
                                         r.cols().end());
                           });
      std::swap(g.a, g.b);
    }
  };
  p.tbb = [&] {
    for (int s = 0; s < sweeps; ++s) {
      const double* in = g.a.data();
      double* out = g.b.data();
      tbb::parallel_for(tbb::blocked_range2d<int>(1, n - 1, row_grain, 1, n - 1, col_grain),
                        [=](const tbb::blocked_range2d<int>& r) {
                          sweep_block(in, out, n, r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
                        });
      std::swap(g.a, g.b);
    }
  };
  // Tiles of the ranges' grains, row_grain × col_grain (the last row and column of tiles cut at the
  // interior's edge), dealt out in row-major order in equal contiguous shares (schedule(static)):
  // each thread gets a band of rows, as a programmer would divide a stencil, and no scheduling cost.
  const int row_tiles = (n - 2 + row_grain - 1) / row_grain, col_tiles = (n - 2 + col_grain - 1) / col_grain;
  p.omp = [&, row_tiles, col_tiles](unsigned t) {
    for (int s = 0; s < sweeps; ++s) {
      const double* in = g.a.data();
      double* out = g.b.data();
#pragma omp parallel for collapse(2) num_threads(t) schedule(static)
      for (int ti = 0; ti < row_tiles; ++ti)
        for (int tj = 0; tj < col_tiles; ++tj) {
          const int r0 = 1 + ti * row_grain, c0 = 1 + tj * col_grain;
          sweep_block(in, out, n, r0, std::min(r0 + row_grain, n - 1), c0, std::min(c0 + col_grain, n - 1));
        }
      std::swap(g.a, g.b);
    }
  };
  // Every point is computed by the same expression from the same inputs: bitwise equal.
  p.check = [&](const std::string& who) {
    if (std::memcmp(g.a.data(), want.a.data(), g.a.size() * sizeof(double)) != 0)
      throw std::runtime_error("for2d: " + who + " differs from the serial grid");
  };
  run_and_report(opt, report, threads, p, "for2d",
                 {{"n", n}, {"sweeps", sweeps}, {"row_grain", row_grain}, {"col_grain", col_grain}});
}

const experiment_registration reg{{"for2d", 10, &run}};

}  // namespace
}  // namespace for2d_experiment

}  // namespace heddle::bench::algorithms
