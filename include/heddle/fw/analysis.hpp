// SPDX-License-Identifier: Apache-2.0
// What a configuration's dependency graph allows: per event, the work of the modules that run and
// the critical path, from an event-driven simulation of the framework's own rules (modules on
// demand, inputs first, paths in order, end paths last) with unlimited threads.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "heddle/core/export.hpp"

namespace heddle::fw {

struct event_cost {
  double work_s;           // the sum of the times of the modules that run
  double critical_path_s;  // the event's duration with unlimited threads
};

// A value: its const calls are thread-safe.
class HEDDLE_EXPORT dependency_bound {
 public:
  std::vector<event_cost> events;

  double work_s() const noexcept;
  double critical_path_s() const noexcept;
  // The largest speed-up over the single-threaded processor that `threads` threads with at most
  // `in_flight` events at once can reach: total work over the longer of work / threads and the
  // events' makespans (each at least max(critical path, work / threads)) shared by the slots.
  double speedup(unsigned threads, std::uint64_t in_flight) const noexcept;
};

class process;
class timeline;

// What the bound replays, per module (its index in the process, as added) and event: the module's
// time in seconds, and a filter's decision (asked of filters only, once they have run).
struct module_costs {
  std::function<double(std::uint32_t module, std::uint64_t event)> seconds;
  std::function<bool(std::uint32_t filter, std::uint64_t event)> passes;
};

// The bound of finalized process `p` for events 0 .. events-1, its modules costing what `costs`
// says: for any module types that know their times (the study's timing modules: src/fw/study/). Cost: per event, one
// call of costs.seconds per module, one of costs.passes per filter that runs, and one replay. std::logic_error if p is
// not finalized.
HEDDLE_EXPORT dependency_bound analyse_dependencies(const process& p, const module_costs& costs, std::uint64_t events);

// The same from a recorded run of finalized process `p` (a timeline filled through
// run_options::record, best by the single-threaded processor, whose module times are not
// stretched by sharing the cores): each module's time in event e is the sum of its recorded
// executions for e, 0 if it did not run, for events 0 .. events-1. Filters' decisions are not
// recorded: every filter counts as passing, and a module its path then skipped costs nothing, so
// the bound is that of the modules that ran. Cost: one pass over the timeline, one replay per event.
// std::logic_error if p is not finalized. Thread-safe beside other reads of `p`, not beside a change
// to it (process.hpp's builder calls) or a run of it starting; it reads `recorded` under its lock.
HEDDLE_EXPORT dependency_bound analyse_dependencies(const process& p, const timeline& recorded, std::uint64_t events);

}  // namespace heddle::fw
