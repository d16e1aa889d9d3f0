// SPDX-License-Identifier: Apache-2.0
// The lu suite: Cilk's recursive block LU (TaskMan §6.1.2), heddle against oneTBB and OpenMP at each
// thread count and serial, interleaved in one process.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cilk_common/peers.hpp"
#include "harness.hpp"
#include "lu.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "table.hpp"

namespace heddle::bench::lu {

namespace {

// Where element (i, j) of an n×n matrix lives in the blocked layout.
std::size_t at(std::size_t n, std::size_t i, std::size_t j) {
  const std::size_t nb = n / block;
  return ((i / block) * nb + j / block) * block_elems + (i % block) * block + j % block;
}

// Uniform in [0, 1) from a 64-bit LCG, plus n on the diagonal: strictly diagonally dominant, so
// the factorization needs no pivoting and is stable.
std::vector<double> make_input(std::size_t n) {
  std::vector<double> m(n * n);
  std::uint64_t s = 1;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      m[at(n, i, j)] = double(s >> 11) * 0x1p-53 + (i == j ? double(n) : 0.0);
    }
  return m;
}

// max |A − L·U| / max |A| for the factors in `f` (blocked): the reference's own check.
double residual(const std::vector<double>& a, const std::vector<double>& f, std::size_t n) {
  std::vector<double> L(n * n, 0.0), U(n * n, 0.0), P(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double v = f[at(n, i, j)];
      if (i > j) L[i * n + j] = v;
      else U[i * n + j] = v;
      if (i == j) L[i * n + j] = 1.0;
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k <= i; ++k) {
      const double l = L[i * n + k];
      for (std::size_t j = k; j < n; ++j) P[i * n + j] += l * U[k * n + j];
    }
  double worst = 0, biggest = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      worst = std::max(worst, std::fabs(a[at(n, i, j)] - P[i * n + j]));
      biggest = std::max(biggest, std::fabs(a[at(n, i, j)]));
    }
  return worst / biggest;
}

void run(const options& opt, nlohmann::json& report) {
  // Cilk's lu -benchmark long (2048×2048) takes ~0.3 s serially here: it is the --quick size; the
  // standard and --full sizes double n for machines with more cores.
  const std::size_t n = opt.pick<std::size_t>(128, 2048, 4096, 8192);
  const std::size_t nb = n / block;
  const auto threads = opt.threads_or({1, 2, 4});
  std::printf("## lu: LU without pivoting of a %zu×%zu diagonally dominant matrix, recursive on %zu×%zu blocks of "
              "%zu×%zu, %d interleaved repetitions after a warm-up %s\n\n",
              n, n, nb, nb, block, block, opt.reps, opt.scale_name());

  const std::vector<double> input = make_input(n);
  std::vector<double> want = input, work(n * n);
  lu_serial({want.data(), nb, nb});
  // L·U against the input where that costs little (n³/3 multiply-adds).
  double res = -1;
  if (n <= 2048) {
    res = residual(input, want, n);
    if (!(res < 1e-12))
      throw std::runtime_error("lu: the serial factors give max |A - L·U| / max |A| = " + std::to_string(res));
  }

  bool identical = true;
  cilk::program p;
  p.prepare = [&] { std::copy(input.begin(), input.end(), work.begin()); };
  const blocks M{work.data(), nb, nb};
  p.serial = [&] { lu_serial(M); };
  p.heddle = [&] { lu_heddle(M); };
  p.tbb = [&] { lu_tbb(M); };
  p.omp = [&](unsigned t) { lu_omp(M, t); };
  // The same operations in the same order on every element: bitwise equal.
  p.check = [&](const std::string& who) {
    identical &= cilk::compare("lu", who, work.data(), want.data(), n * n, 1e-12, "element", [nb](std::size_t k) {
      const std::size_t b = k / block_elems, e = k % block_elems;
      char where[64];
      std::snprintf(where, sizeof where, "[%zu][%zu]", b / nb * block + e / block, b % nb * block + e % block);
      return std::string(where);
    });
  };

  std::map<std::string, heddle_counters> counters;
  const auto rs = run_peers(opt, threads, p, counters);
  std::printf("%s\n", markdown_table(rs, cilk::tbb_name).c_str());
  add_peer_ratios(report, rs, p, "lu", threads, at_most(1.05));
  const double gflop = (4.0 * double(n) - 3.0) * double(n) * double(n) / 6.0 / 1e9;  // Cilk's count_flops
  std::printf("serial: %.2f GFLOP/s; ", gflop / find(rs, cilk::serial_name, 1).median());
  if (res >= 0) std::printf("max |A - L·U| / max |A| = %.3g; ", res);
  std::printf("every result %s the serial one\n", identical ? "bitwise equal to" : "within 1e-12 of");
  const auto stats = print_counters(counters);
  nlohmann::json extra{{"n", n},
                       {"block", block},
                       {"gflop", gflop},
                       {"reps", opt.reps},
                       {"bitwise_equal_to_serial", identical},
                       {"heddle_counters_per_run", stats}};
  if (res >= 0) extra["residual"] = res;
  add_suite(report, "lu", rs, std::move(extra));
}

const registration reg{
    {"lu", 12, "LU without pivoting, recursive blocks (Cilk lu): heddle, oneTBB, OpenMP tasks, serial", &run}};

}  // namespace

}  // namespace heddle::bench::lu
