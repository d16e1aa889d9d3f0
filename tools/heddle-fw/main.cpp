// SPDX-License-Identifier: Apache-2.0
// heddle-fw: runs the event-processing framework on a configuration of the CMS threaded-framework
// study (or heddle's own), multi-threaded or with the single-threaded reference processor.
//   heddle-fw CONFIG [--threads N] [--events-in-flight M] [--events K] [--time-scale S]
//             [--wait busy|sleep|timer] [--single-threaded] [--json FILE] [--timeline FILE]
//   heddle-fw scan CONFIG [--in-flight LIST] [--threads N] [--events K] [--time-scale S] [--reps R] [--out DIR]
//   heddle-fw generate [--producers N] [--events K] [--seed S] [-o FILE]
//   heddle-fw calibrate [--rounds N] [--round-ms MS]
//   heddle-fw overhead CONFIG [--events K] [--threads LIST] [--in-flight M] [--reps R] [--json FILE]
// Exit status: 0 done; 1 a module failed (the run stopped cleanly); 2 bad input (the command line
// or the configuration: one line on stderr says what and where).
#include <cstring>

#include "run_command.hpp"

int main(int argc, char** argv) {
  using namespace heddle::fw::tool;
  if (argc > 1 && std::strcmp(argv[1], "calibrate") == 0) return calibrate_main(argc - 1, argv + 1);
  if (argc > 1 && std::strcmp(argv[1], "scan") == 0) return scan_main(argc - 1, argv + 1);
  if (argc > 1 && std::strcmp(argv[1], "generate") == 0) return generate_main(argc - 1, argv + 1);
  if (argc > 1 && std::strcmp(argv[1], "overhead") == 0) return overhead_main(argc - 1, argv + 1);
  return run_main(argc, argv);
}
