// heddle-fw's commands, one file each; main.cpp picks one by its first argument.
#pragma once

namespace heddle::fw::tool {

int run_main(int argc, char** argv);       // heddle-fw CONFIG [options]
int calibrate_main(int argc, char** argv); // heddle-fw calibrate [options]
int scan_main(int argc, char** argv);      // heddle-fw scan CONFIG [options]
int generate_main(int argc, char** argv);  // heddle-fw generate [options]

}  // namespace heddle::fw::tool
