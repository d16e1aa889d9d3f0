// SPDX-License-Identifier: Apache-2.0
// What the loop experiments of the algorithms suite share (for2d, reduce, scan): one computation
// written with heddle's algorithm, oneTBB's same-named one, OpenMP's construct (where it has one)
// and serially (a peer_program: common/run_peers.hpp), run interleaved in one process at each thread
// count, every result checked.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "heddle_counters.hpp"
#include "report.hpp"
#include "run_peers.hpp"
#include "table.hpp"

namespace heddle::bench::algorithms {

// Runs the peers, prints the table and the counters, records the suite entry and the ratios: heddle's
// time over each peer's, per round (add_peer_ratios), the headline pair (<name>_vs_tbb, _vs_omp)
// held to at most 1.0, the target every algorithm of the suite has (docs/benchmarks.md's summary).
inline void run_and_report(const options& opt, nlohmann::json& report, const std::vector<unsigned>& threads,
                           const peer_program& p, const std::string& name, nlohmann::json extra) {
  std::map<std::string, heddle_counters> counters;
  const auto rs = run_peers(opt, threads, p, counters);
  std::printf("%s\n", markdown_table(rs, p.tbb_name).c_str());
  add_peer_ratios(report, rs, p, name, threads, at_most(1.0));
  extra["heddle_counters_per_run"] = print_counters(counters);
  extra["reps"] = opt.reps;
  add_suite(report, name, rs, std::move(extra));
}

}  // namespace heddle::bench::algorithms
