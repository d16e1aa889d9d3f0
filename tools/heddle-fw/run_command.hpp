// SPDX-License-Identifier: Apache-2.0
// heddle-fw's commands, one file each; main.cpp picks one by its first argument.
#pragma once

#include <string>

namespace heddle::fw::tool {

int run_main(int argc, char** argv);        // heddle-fw CONFIG [options]
int calibrate_main(int argc, char** argv);  // heddle-fw calibrate [options]
int scan_main(int argc, char** argv);       // heddle-fw scan CONFIG [options]
int generate_main(int argc, char** argv);   // heddle-fw generate [options]
int overhead_main(int argc, char** argv);   // heddle-fw overhead CONFIG [options]

// --busy-wait-scale: "config" (0: the configuration's busyWaitScaleFactor), "auto" (calibrate now)
// or a positive rate; CLI::ValidationError otherwise.
double busy_wait_scale_option(const std::string& value);

}  // namespace heddle::fw::tool
