// SPDX-License-Identifier: Apache-2.0
// The markdown table every suite prints: medians with min–max, and ratios to a reference variant.
#pragma once

#include <string>
#include <vector>

#include "harness.hpp"

namespace heddle::bench {

// variant, threads, [config,] median, min–max and, if `reference` names a variant, the ratio of
// each median to the reference's median at the same thread count and config (blank where the
// reference has no such row). Times are in ms, or in µs when every median is under 1 ms.
std::string markdown_table(const std::vector<result>& rs, const std::string& reference = {});

}  // namespace heddle::bench
