// SPDX-License-Identifier: Apache-2.0
// Running heddle-run's nodes (run.cpp): the command line parsed (options.hpp), what happens is
// main.cpp's head comment.
#pragma once

#include "options.hpp"

namespace heddle::run_tool {

// Starts o.nodes processes of o.command, waits for them all (passing SIGINT and SIGTERM on,
// killing them at the timeout), removes what they left in /dev/shm, merges their traces (--trace)
// and returns heddle-run's exit status.
int run(const options& o);

}  // namespace heddle::run_tool
