// SPDX-License-Identifier: Apache-2.0
// heddle-fw scan's command line (scan_options.hpp), with CLI11.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "heddle/fw.hpp"
#include "numeric_options.hpp"
#include "run_command.hpp"
#include "scan_options.hpp"

namespace heddle::fw::tool {

std::optional<int> parse_scan_arguments(int argc, char** argv, scan_settings& s) {
  CLI::App app{
      "heddle-fw scan: throughput against events in flight (the study's Figures 3 and 4) and modules running over "
      "one event (Figure 5), as CSV, JSON and PNG"};
  app.name("heddle-fw scan");
  std::string busy = "config";
  app.add_option("config", s.config, "configuration file (JSON)")->required();
  app.add_option("--in-flight", s.in_flight, "events in flight to scan: --in-flight 1,2,4 (default 1,2,3,4)")
      ->delimiter(',')
      ->check(heddle::tool::whole_number(1, max_scan_in_flight));
  app.add_option("--threads", s.threads, "worker threads (default: one per core)")
      ->check(heddle::tool::whole_number(1, max_threads));
  app.add_option("--events", s.events, "events per run (default: the configuration's, at most 100)")
      ->check(heddle::tool::whole_number(1, UINT64_MAX));
  app.add_option("--time-scale", s.time_scale, "multiplies every module time (default 1e-3)")
      ->check(heddle::tool::real_number(false));
  app.add_option("--wait", s.wait, "busy, sleep, timer or configured (default)")
      ->check(CLI::IsMember({"busy", "sleep", "timer", "configured"}));
  app.add_option("--busy-wait-scale", busy, "config, auto or a number (as for a run)");
  app.add_option("--reps", s.reps, "interleaved repetitions; medians are reported (default 3)")
      ->check(heddle::tool::whole_number(1, 1000));
  app.add_flag("!--no-processes", s.processes, "skip the single-threaded-processes series");
  app.add_option("--figure5-in-flight", s.figure5_in_flight,
                 "events in flight for the modules-running timeline (default 1)")
      ->check(heddle::tool::whole_number(1, max_scan_in_flight));
  app.add_option("--out", s.out, "output folder (default ./scan)");
  try {
    app.parse(argc, argv);
    s.busy_scale = busy_wait_scale_option(busy);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace heddle::fw::tool
