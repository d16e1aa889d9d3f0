// SPDX-License-Identifier: Apache-2.0
// What a timing module does for an event, as numbers: its time and, for a filter, its decision.
// modules.cpp spends and returns them, and tells them to their dependency bound (analysis.cpp,
// which runs nothing), so the two cannot disagree.
#pragma once

#include <algorithm>
#include <cstdint>

#include "heddle/fw/digest.hpp"
#include "study.hpp"

namespace heddle::fw::study {

// A timing module's time for `event`, before the time scale: eventTimes[event % size]; else
// averageTime, spread evenly within [minTime, maxTime] around the average (the same for every run
// of the event) when both are given. `label_hash` is its label's digest.
inline double module_seconds(const module_settings& s, std::uint64_t label_hash, std::uint64_t event) noexcept {
  if (!s.event_times.empty()) return s.event_times[event % s.event_times.size()];
  double t = s.average_time;
  if (s.min_time && s.max_time) {
    const double spread = std::min(s.average_time - *s.min_time, *s.max_time - s.average_time);
    const double u = double(fw_detail::digest_mix(label_hash + event) >> 11) * 0x1p-53;
    t += (2 * u - 1) * spread;
  }
  return t;
}

// A timing filter's result for `event`: 1 (passes) where its pattern says pass[event % size] or
// it has none, else 0.
inline std::int64_t filter_result(const module_settings& s, std::uint64_t event) noexcept {
  return s.pass.empty() || s.pass[event % s.pass.size()] ? 1 : 0;
}

}  // namespace heddle::fw::study
