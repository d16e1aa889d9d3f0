// SPDX-License-Identifier: Apache-2.0
// The heat suite: Cilk's heat (TaskMan §6.1.2): nt explicit time steps on an nx×ny grid, each step
// a recursive division of the rows into tasks; heddle against oneTBB and OpenMP at each thread count
// and serial, interleaved in one process.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cilk_common/peers.hpp"
#include "harness.hpp"
#include "heat.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "table.hpp"

namespace heddle::bench::heat {

namespace {

void run(const options& opt, nlohmann::json& report) {
  // Cilk's heat -benchmark long (4096×1024, 100 steps, ~0.3 s serially here) is the --quick size;
  // the standard and --full sizes double both dimensions for machines with more cores. Leaves of
  // 10 rows, Cilk's default granularity.
  const int nx = opt.pick(64, 4096, 8192, 16384);
  const int ny = opt.pick(48, 1024, 2048, 4096);
  const int nt = opt.pick(5, 100, 100, 100);
  const int leaf_rows = opt.pick(4, 10, 10, 10);
  const auto threads = opt.threads_or({1, 2, 4});
  const problem pb(nx, ny, nt, leaf_rows);
  std::printf("## heat: %d×%d grid, %d time steps, rows divided recursively down to %d per task, %d interleaved "
              "repetitions after a warm-up %s\n\n",
              nx, ny, nt, leaf_rows, opt.reps, opt.scale_name());

  std::vector<double> u0(pb.cells()), u1(pb.cells()), want0(pb.cells()), want1(pb.cells());
  pb.initial(want0.data());
  const double* want = heat_serial(pb, want0.data(), want1.data());
  // The reference against the exact solution: the scheme's error is far below this bound.
  double max_error = 0;
  for (int a = 0; a < nx; ++a)
    for (int b = 0; b < ny; ++b)
      max_error = std::max(max_error, std::fabs(want[std::size_t(a) * ny + b] - pb.exact(a, b)));
  if (!(max_error < 1e-9))
    throw std::runtime_error("heat: the serial result is " + std::to_string(max_error) +
                             " away from the exact solution");

  bool identical = true;
  const double* out = nullptr;
  cilk::program p;
  p.prepare = [&] {
    pb.initial(u0.data());
    out = nullptr;
  };
  p.serial = [&] { out = heat_serial(pb, u0.data(), u1.data()); };
  p.heddle = [&] { out = heat_heddle(pb, u0.data(), u1.data()); };
  p.tbb = [&] { out = heat_tbb(pb, u0.data(), u1.data()); };
  p.omp = [&](unsigned t) { out = heat_omp(pb, u0.data(), u1.data(), t); };
  // The same arithmetic per cell: bitwise equal.
  p.check = [&](const std::string& who) {
    if (out != (nt % 2 ? u1.data() : u0.data()))
      throw std::runtime_error("heat: " + who + " returned the wrong buffer");
    identical &= cilk::compare("heat", who, out, want, pb.cells(), 1e-12, "cell", [ny](std::size_t k) {
      char at[48];
      std::snprintf(at, sizeof at, "(x %zu, y %zu)", k / std::size_t(ny), k % std::size_t(ny));
      return std::string(at);
    });
  };

  std::map<std::string, heddle_counters> counters;
  const auto rs = run_peers(opt, threads, p, counters);
  std::printf("%s\n", markdown_table(rs, cilk::tbb_name).c_str());
  add_peer_ratios(report, rs, p, "heat", threads, at_most(1.05));
  const double serial = find(rs, cilk::serial_name, 1).median();
  std::printf("serial: %.2f ns per cell and step; max error against the exact solution %.3g; every result %s the "
              "serial one\n",
              serial / (double(pb.cells()) * nt) * 1e9, max_error, identical ? "bitwise equal to" : "within 1e-12 of");
  const auto stats = print_counters(counters);
  add_suite(report, "heat", rs,
            {{"nx", nx},
             {"ny", ny},
             {"nt", nt},
             {"leaf_rows", leaf_rows},
             {"reps", opt.reps},
             {"max_error_vs_exact", max_error},
             {"bitwise_equal_to_serial", identical},
             {"heddle_counters_per_run", stats}});
}

const registration reg{{"heat", 11,
                        "2D heat diffusion, rows divided recursively per step (Cilk heat): heddle, oneTBB, OpenMP "
                        "tasks, serial",
                        &run}};

}  // namespace

}  // namespace heddle::bench::heat
