// SPDX-License-Identifier: Apache-2.0
// heddle-fw calibrate: busy-wait iterations per second on this machine, the study's calibration
// program: the value for busyWaitScaleFactor or --busy-wait-scale.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>

#include "heddle/fw/waiting.hpp"
#include "numeric_options.hpp"
#include "run_command.hpp"

namespace heddle::fw::tool {

int calibrate_main(int argc, char** argv) {
  CLI::App app{"heddle-fw calibrate: busy-wait iterations per second on this machine (for busyWaitScaleFactor)"};
  app.name("heddle-fw calibrate");
  int rounds = 7;
  unsigned round_ms = 100;
  app.add_option("--rounds", rounds, "timed rounds; the median is printed (default 7)")
      ->check(heddle::tool::whole_number(1, 1000));
  app.add_option("--round-ms", round_ms, "length of a round in ms (default 100)")
      ->check(heddle::tool::whole_number(1, 60000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  const double rate = calibrate_busy_wait(std::chrono::milliseconds(round_ms), rounds);
  std::printf("busyWaitScaleFactor %.4g\n", rate);
  return 0;
}

}  // namespace heddle::fw::tool
