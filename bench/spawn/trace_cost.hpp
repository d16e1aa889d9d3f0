// SPDX-License-Identifier: Apache-2.0
// What the trace recorder costs the spawn benchmark (docs/trace.md, "Cost"):
//   trace_off_vs_compiled_out  fib with the recorder compiled in but off / compiled out, medians,
//                              two child programs run alternately (trace_child.cpp); aim ≤ 1.02
//   trace_ns_per_event         (T traced − T off) / records, fib on one worker, in this process
#pragma once

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace heddle::bench::spawn {

void measure_trace_cost(const options& opt, int n, nlohmann::json& report);

}  // namespace heddle::bench::spawn
