// The JSON report heddle-bench writes with --json:
//   { "machine": { "cores", "cpu", "date" },
//     "suites":  { "<suite>": { "unit": "s", "rows": [ { "variant", "threads", ["config",]
//                                                        "median", "min", "max", "samples" } ],
//                               ["tables": { "<table>": [ { flat row }, ... ] },]  (plotted too)
//                               ["plot_rows": false,]  (no time-bar plot of the rows)
//                               ... what else the suite records (its input size, counters) } },
//     "ratios":  { "<name>": number, ... } }
// Ratio names say what they compare: fib_1t_vs_tbb is heddle's time over oneTBB's at 1 thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace heddle::bench {

// An empty report with its "machine" object filled in.
nlohmann::json new_report();

// cores (std::thread::hardware_concurrency), cpu (the first "model name" of /proc/cpuinfo) and the
// date in UTC, ISO 8601.
nlohmann::json machine_json();

// report["suites"][suite]: "unit" and "rows" from `rs`, merged with `extra`.
void add_suite(nlohmann::json& report, const std::string& suite, const std::vector<result>& rs,
               nlohmann::json extra = nlohmann::json::object());

// report["ratios"][name] = value, and a line on stdout saying what it is.
void add_ratio(nlohmann::json& report, const std::string& name, double value, const std::string& meaning);

}  // namespace heddle::bench
