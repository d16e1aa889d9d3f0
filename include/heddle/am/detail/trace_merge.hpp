// SPDX-License-Identifier: Apache-2.0
// Joining the traces of a run's processes with `heddle-trace merge`: what HEDDLE_TRACE does under
// mpirun (src/am/trace_run.cpp) and heddle-run --trace do at the run's end.
#pragma once

#include <string>
#include <vector>

#include "heddle/core/export.hpp"

namespace heddle::am_detail {

// Runs `heddle-trace merge out inputs...` and waits for it: `preferred` when it names an executable
// file, else the heddle-trace in PATH, else the installed one. Its report goes to stderr (the
// caller's output stays its own). Returns its exit status, or -1 if it could not be started or was
// killed. Forks a process: not for a hot path.
HEDDLE_EXPORT int merge_traces(const std::string& out, const std::vector<std::string>& inputs,
                               const std::string& preferred = {}) noexcept;

}  // namespace heddle::am_detail
