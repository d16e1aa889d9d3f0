// A built-in module's time for an event, before the time scale: what demo modules spend and what
// the dependency bound counts.
#pragma once

#include <cstdint>

#include "heddle/fw/config.hpp"
#include "graph.hpp"

namespace heddle::fw::detail {

// eventTimes[event % size]; else averageTime, spread evenly within [minTime, maxTime] around the
// average (the same for every run of the event) when both are given.
inline double module_seconds(const module_config& c, std::uint64_t label_hash, std::uint64_t event) noexcept {
  if (!c.event_times.empty()) return c.event_times[event % c.event_times.size()];
  double s = c.average_time;
  if (c.min_time && c.max_time) {
    const double spread = std::min(c.average_time - *c.min_time, *c.max_time - c.average_time);
    const double u = double(mix(label_hash + event) >> 11) * 0x1p-53;
    s += (2 * u - 1) * spread;
  }
  return s;
}

}  // namespace heddle::fw::detail
