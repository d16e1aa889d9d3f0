// SPDX-License-Identifier: Apache-2.0
// The JSON report heddle-bench writes with --json (and, one file per suite, with --record):
//   { "provenance": { what ran, where and when: provenance.hpp },
//     "suites":  { "<suite>": { "unit": "s", "rows": [ { "variant", "threads", ["config",]
//                                                        "median", "min", "max", "samples" } ],
//                               ["tables": { "<table>": [ { flat row }, ... ] },]  (plotted too)
//                               ["plot_rows": false,]  (no time-bar plot of the rows)
//                               ... what else the suite records (its input size, counters) } },
//     "ratios":  { "<name>": { "value", ["rounds", "lo", "hi",] "meaning", ["target", "verdict"] }, ... } }
// Ratio names say what they compare: fib_1t_vs_tbb is heddle's time over oneTBB's at 1 thread
// (docs/benchmarks.md states the convention). "lo" and "hi" bound the 95 % interval of a figure
// computed round by round (harness.hpp: estimate); a figure measured once has none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace heddle::bench {

// What a figure is held to: at most, or at least, `bound`.
struct target {
  enum class direction { at_most, at_least };
  direction dir = direction::at_most;
  double bound = 0;
  std::string text() const;  // "<= 1.05", ">= 0.95"
};
inline target at_most(double bound) { return {target::direction::at_most, bound}; }
inline target at_least(double bound) { return {target::direction::at_least, bound}; }

// "met" when the whole interval satisfies the target, "missed" when none of it does, "not shown"
// otherwise: a margin inside the runs' own spread is not a result. A figure measured once, exactly
// (bytes, counts: estimate::exact) is met or missed by its value; one of a single round shows nothing.
std::string verdict(const estimate& e, const target& t);

// An empty report with its "provenance" filled in (provenance.hpp).
nlohmann::json new_report();

// report["suites"][suite]: "unit" and "rows" from `rs`, merged with `extra`.
void add_suite(nlohmann::json& report, const std::string& suite, const std::vector<result>& rs,
               nlohmann::json extra = nlohmann::json::object());

// report["ratios"][name]: the figure, its interval, what it means and, with a target, the target
// and its verdict; and a line on stdout saying the same.
void add_figure(nlohmann::json& report, const std::string& name, const estimate& e, const std::string& meaning,
                std::optional<target> t = std::nullopt);

// A figure measured once (no rounds to pair): bytes per queue, a count, a rate of one run.
inline void add_ratio(nlohmann::json& report, const std::string& name, double value, const std::string& meaning,
                      std::optional<target> t = std::nullopt) {
  add_figure(report, name, estimate::exact(value), meaning, t);
}

}  // namespace heddle::bench
