// SPDX-License-Identifier: Apache-2.0
// heddle's parallel algorithms, spelled as oneTBB spells them: ranges and partitioners,
// parallel_for, reductions, scans, sorts, pipelines. Header-only templates of the core layer over
// task groups (docs/algorithms.md). Also brought in by heddle/core.hpp and heddle/heddle.hpp.
#pragma once

#include "heddle/algorithm/blocked_range.hpp"
#include "heddle/algorithm/blocked_range2d.hpp"
#include "heddle/algorithm/blocked_range3d.hpp"
#include "heddle/algorithm/parallel_for.hpp"
#include "heddle/algorithm/parallel_for_each.hpp"
#include "heddle/algorithm/parallel_invoke.hpp"
#include "heddle/algorithm/parallel_pipeline.hpp"
#include "heddle/algorithm/parallel_reduce.hpp"
#include "heddle/algorithm/parallel_scan.hpp"
#include "heddle/algorithm/parallel_sort.hpp"
#include "heddle/algorithm/partitioner.hpp"
#include "heddle/algorithm/split.hpp"
