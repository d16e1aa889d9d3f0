// SPDX-License-Identifier: Apache-2.0
// heddle-fw CONFIG's command line: what it asks for (run_arguments), parsed by parse_run_arguments
// (run_options.cpp) and run by run_job (run.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heddle::fw::tool {

// The options of a run, as given; unset ones take the configuration's values (run.cpp).
struct run_arguments {
  std::string config;
  std::optional<unsigned> threads;
  std::optional<std::uint64_t> in_flight, events, per_run, per_lumi;
  std::uint64_t first_event = 0;
  std::optional<unsigned> concurrent_lumis;
  std::optional<double> time_scale;
  std::optional<unsigned> idle_spin_us;
  std::string wait, busy_scale = "config";
  double busy_wait_scale = 0;  // busy_scale read (busy_wait_scale_option): 0 is the configuration's
  bool single = false, quiet = false;
  std::string json_file, timeline_file, trace_file;
  std::vector<std::string> plugin_path;
  std::vector<std::string> sets;    // --set LABEL.PARAMETER=VALUE
  std::vector<std::string> extras;  // what heddle-fw's options left: the configuration's own (process.commandLine)
};

// Reads heddle-fw CONFIG's arguments into `c`: std::nullopt where there is a run to do, else the
// exit status (0 after --help, 2 after a bad command line; CLI11 has printed why).
std::optional<int> parse_run_arguments(int argc, char** argv, run_arguments& c);

// Runs `c`: reads the configuration (with the options it declares and --set), builds and runs the
// process, prints the report and writes the files asked for. The exit status: 0 done, 1 a module
// failed (the run stopped cleanly), 2 bad input (one line on stderr says what and where).
int run_job(run_arguments c);

}  // namespace heddle::fw::tool
