// SPDX-License-Identifier: Apache-2.0
// One computation written for heddle, oneTBB, OpenMP (where it has the construct) and serially, run
// interleaved in one process at each thread count, every result checked. The algorithms suite's
// loop experiments (algorithms/loop_peers.hpp) and the Cilk-example suites (cilk_common/peers.hpp:
// matmul, heat, lu) fill in a peer_program; run_peers() makes the variants, runs them and collects
// heddle's counters; add_peer_ratios() records heddle's time over each peer's. Header-only: only
// suites that link TBB::tbb include it (heddle_bench_common does not depend on oneTBB).
#pragma once

#include <heddle/heddle.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "heddle_counters.hpp"
#include "heddle_runtimes.hpp"
#include "report.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench {

// One computation in each runtime. Each function runs it once on the experiment's data; prepare()
// resets that data (untimed) before each run; check() throws std::runtime_error naming `who` when
// the result is wrong. The names are the variants' names in tables, reports and ratios.
struct peer_program {
  std::string heddle_name = "heddle";
  std::string tbb_name;  // "oneTBB parallel_reduce", "oneTBB task_group", ...
  std::string omp_name;  // empty: OpenMP has no such construct, no column
  std::function<void()> prepare = [] {};
  std::function<void()> serial;
  std::function<void()> heddle;       // runs on a worker of a heddle::runtime of t workers (in rt.task)
  std::function<void()> tbb;          // runs inside a task_arena of t threads (arena.execute)
  std::function<void(unsigned)> omp;  // with a team of t threads
  std::function<void(const std::string& who)> check;
};

// Serial once, then every peer at each thread count, `opt.reps` interleaved rounds after a warm-up.
// heddle's counters per thread count land in `counters` (keyed "<heddle_name> <t>t").
inline std::vector<result> run_peers(const options& opt, const std::vector<unsigned>& threads, const peer_program& p,
                                     std::map<std::string, heddle_counters>& counters) {
  // Made before any timing and kept alive by the closures that use them.
  auto runtimes = std::make_shared<heddle_runtimes>(threads);
  auto arenas = std::make_shared<tbb_arenas>(threads);
  auto once = [&p](const std::string& who, auto&& body) {
    p.prepare();
    return timed(
        [&] {
          body();
          return 0;
        },
        [&](int) { p.check(who); });
  };
  std::vector<variant> vs;
  vs.push_back({"serial", 1, {}, [&p, once] { return once("serial", [&] { p.serial(); }); }});
  for (unsigned t : threads) {
    // std::string(" ") + …: GCC 12 warns (-Wrestrict, falsely) on a literal + a temporary string.
    const std::string ts = std::string(" ") + std::to_string(t) + "t";
    auto& c = counters[p.heddle_name + ts];
    vs.push_back({p.heddle_name, t, {}, [&p, &c, once, runtimes, t, ts] {
                    auto& rt = (*runtimes)[t];
                    return c(rt, [&] { return once(p.heddle_name + ts, [&] { rt.task([&] { p.heddle(); }).get(); }); });
                  }});
    vs.push_back({p.tbb_name, t, {}, [&p, once, arenas, t, ts] {
                    auto& arena = (*arenas)[t];
                    return once(p.tbb_name + ts, [&] { arena.execute([&] { p.tbb(); }); });
                  }});
    if (!p.omp_name.empty())
      vs.push_back({p.omp_name, t, {}, [&p, once, t, ts] { return once(p.omp_name + ts, [&] { p.omp(t); }); }});
  }
  return run_interleaved(vs, opt.reps);
}

// <name>_vs_tbb (and _vs_omp when OpenMP ran) at headline_threads(), and <name>_<t>t_vs_tbb / _vs_omp
// at each thread count: heddle's time over the peer's, round by round (estimate), the headline pair
// held to `headline_target` (each peer's figure alike).
inline void add_peer_ratios(nlohmann::json& report, const std::vector<result>& rs, const peer_program& p,
                            const std::string& name, const std::vector<unsigned>& threads,
                            std::optional<target> headline_target = std::nullopt) {
  const unsigned head = headline_threads(threads);
  auto ratio = [&](const std::string& peer, unsigned t) {
    return paired_ratio(find(rs, p.heddle_name, t), find(rs, peer, t));
  };
  auto plural = [](unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  add_figure(report, name + "_vs_tbb", ratio(p.tbb_name, head),
             "heddle / " + p.tbb_name + ", per round, " + plural(head) + " (most without oversubscription)",
             headline_target);
  if (!p.omp_name.empty())
    add_figure(report, name + "_vs_omp", ratio(p.omp_name, head),
               "heddle / " + p.omp_name + ", per round, " + plural(head) + " (most without oversubscription)",
               headline_target);
  for (unsigned t : threads) {
    const std::string ts = std::to_string(t) + "t";
    add_figure(report, name + "_" + ts + "_vs_tbb", ratio(p.tbb_name, t),
               "heddle / " + p.tbb_name + ", per round, " + plural(t));
    if (!p.omp_name.empty())
      add_figure(report, name + "_" + ts + "_vs_omp", ratio(p.omp_name, t),
                 "heddle / " + p.omp_name + ", per round, " + plural(t));
  }
}

}  // namespace heddle::bench
