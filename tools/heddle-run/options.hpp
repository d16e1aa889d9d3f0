// SPDX-License-Identifier: Apache-2.0
// heddle-run's command line (options.cpp), apart from running the nodes (run.cpp).
#pragma once

#include <string>
#include <vector>

namespace heddle::run_tool {

struct options {
  unsigned nodes = 0;
  std::string backend = "shm";  // shm or tcp
  std::string bind = "127.0.0.1";
  double timeout = 0;                // seconds; 0: never
  std::string trace_file;            // --trace: empty for none
  std::vector<std::string> command;  // the program and its arguments, not empty
};

// Parses argv into `out`. Returns -1 when the nodes are to be run; else the status to exit with
// now: 0 after --help, 2 for a bad command line (with the reason on stderr).
int parse(int argc, char** argv, options& out);

}  // namespace heddle::run_tool
