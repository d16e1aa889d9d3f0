// SPDX-License-Identifier: Apache-2.0
// What a built-in module does for an event, as numbers: its time and, for a filter, its decision.
// demo_modules.cpp spends and returns them, and tells them to their dependency bound
// (study_analysis.cpp, which runs nothing), so the two cannot disagree.
#pragma once

#include <algorithm>
#include <cstdint>

#include "graph.hpp"
#include "heddle/fw/config.hpp"

namespace heddle::fw_detail {

// A built-in module's time for `event`, before the time scale: eventTimes[event % size]; else
// averageTime, spread evenly within [minTime, maxTime] around the average (the same for every run
// of the event) when both are given.
inline double module_seconds(const fw::module_config& c, std::uint64_t label_hash, std::uint64_t event) noexcept {
  if (!c.event_times.empty()) return c.event_times[event % c.event_times.size()];
  double s = c.average_time;
  if (c.min_time && c.max_time) {
    const double spread = std::min(c.average_time - *c.min_time, *c.max_time - c.average_time);
    const double u = double(mix(label_hash + event) >> 11) * 0x1p-53;
    s += (2 * u - 1) * spread;
  }
  return s;
}

// A built-in filter's result for `event`: 1 (passes) where its pattern says pass[event % size] or
// it has none, else 0.
inline std::int64_t filter_result(const fw::module_config& c, std::uint64_t event) noexcept {
  return c.pass.empty() || c.pass[event % c.pass.size()] ? 1 : 0;
}

}  // namespace heddle::fw_detail
