// SPDX-License-Identifier: Apache-2.0
// heddle-fw scan's command line: what it asks for (scan_settings), parsed by parse_scan_arguments
// (scan_options.cpp) and run by run_scan (scan.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heddle::fw::tool {

// Each point of the scan is several runs; a million events in flight is already far past the
// point where throughput stops changing.
constexpr std::uint64_t max_scan_in_flight = 1000000;

// The options of a scan, as given (their defaults those of heddle-fw scan --help).
struct scan_settings {
  std::string config;
  std::vector<std::uint64_t> in_flight{1, 2, 3, 4};  // the points of the scan
  unsigned threads = 0;                              // 0: one per core
  std::uint64_t events = 0;                          // per run; 0: the configuration's, at most 100
  double time_scale = 1e-3;
  std::string wait = "configured";  // a wait mode's name (config.hpp)
  double busy_scale = 0;            // busy-wait iterations per second; 0: the configuration's
  int reps = 3;                     // interleaved repetitions
  bool processes = true;            // the single-threaded-processes series too
  std::uint64_t figure5_in_flight = 1;
  std::string out = "scan";  // the output folder
};

// Reads heddle-fw scan's arguments into `s`: std::nullopt where there is a scan to do, else the
// exit status (0 after --help, 2 after a bad command line; CLI11 has printed why).
std::optional<int> parse_scan_arguments(int argc, char** argv, scan_settings& s);

// Runs the scan `s` asks for, writes its files and prints its summary. The exit status: 0 done,
// 1 a run failed, 2 bad input (one line on stderr says what).
int run_scan(scan_settings s);

}  // namespace heddle::fw::tool
