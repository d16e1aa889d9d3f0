// SPDX-License-Identifier: Apache-2.0
// The matmul suite: C += A·B by recursive quadrants (Cilk's matmul, as in TaskMan §6.1.2), heddle
// against oneTBB and OpenMP at each thread count and serial, interleaved in one process.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cilk_common/peers.hpp"
#include "harness.hpp"
#include "matmul.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "table.hpp"

namespace heddle::bench::matmul {

namespace {

// Uniform in [-1, 1), from a 64-bit LCG: the same inputs on every machine.
void fill_random(std::vector<double>& v, std::uint64_t seed) {
  for (double& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = double(seed >> 11) * 0x1p-52 - 1.0;
  }
}

// The reference itself against A·(B·x) for one vector x: catches a wrong serial recursion.
void check_reference(const std::vector<double>& A, const std::vector<double>& B, const std::vector<double>& C,
                     std::size_t n) {
  std::vector<double> x(n), bx(n, 0.0), abx(n, 0.0), cx(n, 0.0);
  fill_random(x, 7);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) bx[i] += B[i * n + j] * x[j];
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      abx[i] += A[i * n + j] * bx[j];
      cx[i] += C[i * n + j] * x[j];
    }
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(abx[i] - cx[i]) <= 1e-9 * double(n) * (1.0 + std::fabs(abx[i]))))
      throw std::runtime_error("matmul: the serial product fails (A·B)x = A(Bx) at row " + std::to_string(i) + ": " +
                               std::to_string(cx[i]) + " vs " + std::to_string(abx[i]));
}

void run(const options& opt, nlohmann::json& report) {
  const std::size_t n = opt.pick<std::size_t>(128, 1024, 2048, 4096);
  const auto threads = opt.threads_or({1, 2, 4});
  std::printf("## matmul: C += A·B, %zu×%zu doubles, recursive quadrants down to %zu×%zu leaves "
              "(two rounds of four products), %d interleaved repetitions after a warm-up %s\n\n",
              n, n, leaf, leaf, opt.reps, opt.scale_name());

  std::vector<double> A(n * n), B(n * n), C(n * n), want(n * n, 0.0);
  fill_random(A, 1);
  fill_random(B, 2);
  multiply_serial(want.data(), A.data(), B.data(), n, n);
  check_reference(A, B, want, n);

  bool identical = true;
  cilk::program p;
  p.prepare = [&] { std::fill(C.begin(), C.end(), 0.0); };
  p.serial = [&] { multiply_serial(C.data(), A.data(), B.data(), n, n); };
  p.heddle = [&] { multiply_heddle(C.data(), A.data(), B.data(), n, n); };
  p.tbb = [&] { multiply_tbb(C.data(), A.data(), B.data(), n, n); };
  p.omp = [&](unsigned t) { multiply_omp(C.data(), A.data(), B.data(), n, n, t); };
  // Same additions in the same order: bitwise equal. The tolerance would admit reassociation only.
  p.check = [&](const std::string& who) {
    identical &= cilk::compare("matmul", who, C.data(), want.data(), n * n, 1e-12, "C[i][j]", [n](std::size_t k) {
      char at[48];
      std::snprintf(at, sizeof at, "[%zu][%zu]", k / n, k % n);
      return std::string(at);
    });
  };

  std::map<std::string, heddle_counters> counters;
  const auto rs = run_peers(opt, threads, p, counters);
  std::printf("%s\n", markdown_table(rs, cilk::tbb_name).c_str());
  add_peer_ratios(report, rs, p, "matmul", threads, at_most(1.05));
  const double gflop = 2.0 * double(n) * double(n) * double(n) / 1e9;
  std::printf("serial: %.2f GFLOP/s; every result %s the serial one\n", gflop / find(rs, cilk::serial_name, 1).median(),
              identical ? "bitwise equal to" : "within 1e-12 (relative) of");
  const auto stats = print_counters(counters);
  add_suite(report, "matmul", rs,
            {{"n", n},
             {"leaf", leaf},
             {"gflop", gflop},
             {"reps", opt.reps},
             {"bitwise_equal_to_serial", identical},
             {"heddle_counters_per_run", stats}});
}

const registration reg{
    {"matmul", 10, "C += A·B by recursive quadrants (Cilk matmul): heddle, oneTBB, OpenMP tasks, serial", &run}};

}  // namespace

}  // namespace heddle::bench::matmul
