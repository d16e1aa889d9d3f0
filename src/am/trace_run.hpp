// SPDX-License-Identifier: Apache-2.0
// This process's place in a run of several, for the trace recorder (trace_run.cpp).
#pragma once

namespace heddle::am_detail {

// If this process is one of a run's nodes (heddle-run's HEDDLE_NODE, or an MPI launcher's rank),
// tells the core's recorder: its index, its own HEDDLE_TRACE file, and the gathering of the run's
// files at exit. Called once, when the library loads.
void join_trace_run() noexcept;

}  // namespace heddle::am_detail
