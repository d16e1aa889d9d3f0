// SPDX-License-Identifier: Apache-2.0
// The statistical evaluator of TaskMan §6.1.1: null tasks that spin on the clock for durations drawn
// from a distribution, in two shapes. Every runtime runs the same workload object; only the way the
// tasks are spawned differs (heddle.cpp, tbb.cpp, omp.cpp side by side).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace heddle::bench::stats {

enum class distribution { exponential, pareto };
enum class shape {
  loop,  // loop-level: one task spawns every task in bulk, then waits for all of them
  tree,  // task-level: a 4-ary tree; each task spawns two children, works, spawns two more, waits
};

// Pareto's shape parameter. With alpha = 2 the mean is finite (scale = mean / 2) and the tail is
// heavy: a few tasks are ten or more times the mean, as in TaskMan's Pareto runs.
inline constexpr double pareto_alpha = 2.0;

// Spins until the clock has advanced by `ns` nanoseconds: the work of one null task.
inline void spin_for(std::int64_t ns) {
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + std::chrono::nanoseconds(ns);
  while (clock::now() < end) {
  }
}

struct workload {
  distribution dist;
  shape form;
  double mean_ns;
  std::vector<std::int64_t> duration_ns;  // task i spins for duration_ns[i]
  std::int64_t total_ns = 0;              // the sum: total work
  // ran[i] counts the runs of task i; every run must leave each at exactly 1 (check_and_reset).
  std::vector<std::uint32_t> ran;

  // `tasks` durations with the given mean, from a fixed seed (the same on every machine).
  workload(distribution d, shape s, double mean_ns, std::size_t tasks, std::uint64_t seed);

  std::size_t size() const { return duration_ns.size(); }
  // Task i's own work, and the record that it ran. Single writer per slot: no data race.
  void run_task(std::size_t i) {
    spin_for(duration_ns[i]);
    ++ran[i];
  }
  // Tree shape: task i's children are 4i+1 .. 4i+4 where below size() (a complete 4-ary tree in
  // breadth-first order, cut at size(): leaves at two neighbouring depths).
  std::size_t child(std::size_t i, unsigned k) const { return 4 * i + 1 + k; }
  unsigned depth() const;  // of the deepest task, the root at 0

  // Throws std::runtime_error naming the first task that did not run exactly once; then zeroes `ran`.
  void check_and_reset(const std::string& who);

  std::string name() const;  // "exp loop 1us", "pareto tree 250ns"
};

// "250ns", "1us", "100us": a mean task length as it appears in names.
std::string mean_label(double mean_ns);

// One whole run of the workload, each in its runtime (the runtime objects are made by the suite).
// Each returns when every task has finished.
void run_serial(workload& w);

}  // namespace heddle::bench::stats
