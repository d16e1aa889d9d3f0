// SPDX-License-Identifier: Apache-2.0
// The stats workload in each runtime, one file each: heddle.cpp, tbb.cpp, omp.cpp.
#pragma once

#include <heddle/core/runtime.hpp>
#include <tbb/task_arena.h>

#include "workload.hpp"

namespace heddle::bench::stats {

void run_heddle(heddle::runtime& rt, workload& w);  // heddle::task_group, from one root task
void run_tbb(tbb::task_arena& arena, workload& w);  // tbb::task_group inside the arena
void run_omp(unsigned threads, workload& w);        // #pragma omp task in a parallel region of `threads`

}  // namespace heddle::bench::stats
