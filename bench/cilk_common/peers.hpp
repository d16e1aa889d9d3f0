// What the Cilk-example suites (matmul, heat, lu) share: one divide-and-conquer program written for
// heddle, oneTBB and OpenMP, timed against its serial version in one process, interleaved, each
// result checked against the serial one. A suite supplies the four ways to run its program and a
// check; run_peers() makes the variants, runs them and collects heddle's counters; add_peer_ratios()
// records heddle's time over each peer's.
#pragma once

#include <heddle/heddle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "heddle_counters.hpp"
#include "heddle_runtimes.hpp"
#include "report.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench::cilk {

inline constexpr const char* serial_name = "serial";
inline constexpr const char* heddle_name = "heddle";
inline constexpr const char* tbb_name = "oneTBB task_group";
inline constexpr const char* omp_name = "OpenMP tasks";

// One program in each runtime. Every function runs the whole computation once on the suite's
// working data; prepare() resets that data (outside the timed region) before each run.
struct program {
  std::function<void()> prepare;
  std::function<void()> serial;
  std::function<void()> heddle;          // runs on a worker: the body of rt.task(...)
  std::function<void()> tbb;             // runs inside arena.execute(...)
  std::function<void(unsigned)> omp;     // makes its own team of that many threads
  std::function<void(const std::string& who)> check;  // throws std::runtime_error naming `who`
};

// Serial once, then heddle, oneTBB and OpenMP at each thread count; `reps` interleaved rounds after
// a warm-up. heddle's counters per thread count land in `counters` (keyed "heddle <t>t").
inline std::vector<result> run_peers(const options& opt, const std::vector<unsigned>& threads, const program& p,
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
  vs.push_back({serial_name, 1, {}, [&p, once] { return once("serial", [&] { p.serial(); }); }});
  for (unsigned t : threads) {
    // std::string(" ") + …: GCC 12 warns (-Wrestrict, falsely) on a literal + a temporary string.
    const std::string ts = std::string(" ") + std::to_string(t) + "t";
    auto& c = counters[heddle_name + ts];
    vs.push_back({heddle_name, t, {}, [&p, &c, once, runtimes, t, ts] {
                    auto& rt = (*runtimes)[t];
                    return c(rt, [&] { return once(heddle_name + ts, [&] { rt.task([&] { p.heddle(); }).get(); }); });
                  }});
    vs.push_back({tbb_name, t, {}, [&p, once, arenas, t, ts] {
                    auto& arena = (*arenas)[t];
                    return once(tbb_name + ts, [&] { arena.execute([&] { p.tbb(); }); });
                  }});
    vs.push_back({omp_name, t, {}, [&p, once, t, ts] { return once(omp_name + ts, [&] { p.omp(t); }); }});
  }
  auto rs = run_interleaved(vs, opt.reps);
  return rs;
}

// <suite>_vs_tbb and <suite>_vs_omp at headline_threads(), and <suite>_<t>t_vs_tbb / _vs_omp at each
// thread count: heddle's median time over the peer's.
inline void add_peer_ratios(nlohmann::json& report, const std::vector<result>& rs, const std::string& suite,
                            const std::vector<unsigned>& threads) {
  const unsigned head = headline_threads(threads);
  auto ratio = [&](const char* peer, unsigned t) { return find(rs, heddle_name, t).median() / find(rs, peer, t).median(); };
  auto plural = [](unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  add_ratio(report, suite + "_vs_tbb", ratio(tbb_name, head),
            "heddle / oneTBB task_group, medians, " + plural(head) + " (most without oversubscription)");
  add_ratio(report, suite + "_vs_omp", ratio(omp_name, head),
            "heddle / OpenMP tasks, medians, " + plural(head) + " (most without oversubscription)");
  for (unsigned t : threads) {
    const std::string ts = std::to_string(t) + "t";
    add_ratio(report, suite + "_" + ts + "_vs_tbb", ratio(tbb_name, t), "heddle / oneTBB task_group, " + plural(t));
    add_ratio(report, suite + "_" + ts + "_vs_omp", ratio(omp_name, t), "heddle / OpenMP tasks, " + plural(t));
  }
}

// Compares n values with the serial reference: each must be within tol·max(1, |want|) of it.
// Throws std::runtime_error naming the suite, the variant, the first index that differs and both
// values. Returns whether every value was bitwise equal (the programs do the same operations in the
// same order, so they should be).
inline bool compare(const std::string& suite, const std::string& who, const double* got, const double* want,
                    std::size_t n, double tol, const char* index_name = "index",
                    std::function<std::string(std::size_t)> where = {}) {
  bool identical = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    identical = false;
    const double err = std::fabs(got[i] - want[i]);
    if (!(err <= tol * std::max(1.0, std::fabs(want[i])))) {  // NaN fails too
      char msg[160];
      std::snprintf(msg, sizeof msg, ": got %.17g, serial %.17g (difference %.3g, tolerance %.3g relative)", got[i],
                    want[i], err, tol);
      std::string at = where ? where(i) : std::to_string(i);
      throw std::runtime_error(suite + ": " + who + " differs from serial at " + index_name + " " + at + msg);
    }
  }
  return identical;
}

}  // namespace heddle::bench::cilk
