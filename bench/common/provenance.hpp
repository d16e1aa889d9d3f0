// SPDX-License-Identifier: Apache-2.0
// What a benchmark report records about its own making, so that a reader can tell which code, which
// build and which machine a figure comes from (report["provenance"]):
//   commit, dirty         the source tree's HEAD and whether it had uncommitted changes (to any
//                         tracked file but the recorded results, bench/recorded), read with git when
//                         heddle-bench starts ("unknown" outside a git checkout)
//   compiler, build_type, flags
//   versions              oneTBB, Open MPI, FastJet, HDF5 as the build found them ("" when absent)
//   cpu, cores, kernel    /proc/cpuinfo's first model name, std::thread::hardware_concurrency, uname
//   machine               a short name made of the CPU model and the core count ("amd-epyc-2c"): the
//                         name of a recorded result's file
//   date                  UTC, ISO 8601, when the report was begun
// heddle-bench adds "command" (its arguments) and "scale".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace heddle::bench {

nlohmann::json provenance_json();

// "amd-epyc-2c" from "AMD EPYC" and 2 cores: lower case, runs of other characters as one '-'.
std::string machine_name(const std::string& cpu_model, unsigned cores);

}  // namespace heddle::bench
