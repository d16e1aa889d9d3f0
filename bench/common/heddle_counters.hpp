// SPDX-License-Identifier: Apache-2.0
// heddle's scheduler counters (runtime_stats) summed over every run of one variant, read around each
// run outside its timing: how many tasks ran, were stolen, how often workers slept and were woken.
// Header-only: only suites that link heddle::heddle include it.
#pragma once

#include <heddle/heddle.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace heddle::bench {

struct heddle_counters {
  heddle::runtime_stats sum{};
  int runs = 0;

  // Runs timed_run() (which returns seconds) and adds what the runtime counted meanwhile.
  template <class F>
  double operator()(heddle::runtime& rt, F&& timed_run) {
    const auto before = rt.stats();
    const double s = timed_run();
    const auto after = rt.stats();
    sum.spawned += after.spawned - before.spawned;
    sum.executed += after.executed - before.executed;
    sum.steals += after.steals - before.steals;
    sum.failed_steals += after.failed_steals - before.failed_steals;
    sum.parks += after.parks - before.parks;
    sum.wakeups += after.wakeups - before.wakeups;
    sum.lost_wakeups += after.lost_wakeups - before.lost_wakeups;
    ++runs;
    return s;
  }

  double per_run(std::uint64_t v) const { return runs ? double(v) / runs : 0.0; }

  nlohmann::json json() const {
    return {{"spawned", per_run(sum.spawned)},
            {"executed", per_run(sum.executed)},
            {"steals", per_run(sum.steals)},
            {"failed_steals", per_run(sum.failed_steals)},
            {"parks", per_run(sum.parks)},
            {"wakeups", per_run(sum.wakeups)},
            {"lost_wakeups", per_run(sum.lost_wakeups)}};
  }

  // "spawned 2692536, executed 2692537, steals 12, failed steals 3, parks 2, wake-ups 2, lost 0" (per
  // run; "lost": wake-ups the scheduler missed, runtime_stats::lost_wakeups)
  std::string line() const {
    char s[240];
    std::snprintf(s, sizeof s,
                  "spawned %.0f, executed %.0f, steals %.0f, failed steals %.0f, parks %.0f, wake-ups %.0f, lost %.0f",
                  per_run(sum.spawned), per_run(sum.executed), per_run(sum.steals), per_run(sum.failed_steals),
                  per_run(sum.parks), per_run(sum.wakeups), per_run(sum.lost_wakeups));
    return s;
  }
};

// Prints each variant's counters per run under a heading and returns them as a JSON object (for
// the suite's "heddle_counters_per_run").
inline nlohmann::json print_counters(const std::map<std::string, heddle_counters>& counters) {
  nlohmann::json stats = nlohmann::json::object();
  std::printf("\nheddle counters per run (warm-up included):\n");
  for (auto& [name, c] : counters) {
    stats[name] = c.json();
    std::printf("  %-30s %s\n", name.c_str(), c.line().c_str());
  }
  std::printf("\n");
  return stats;
}

}  // namespace heddle::bench
