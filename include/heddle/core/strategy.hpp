// SPDX-License-Identifier: Apache-2.0
// How a successor starts once what it depends on (a task, an async operation, a promise) is done.
// Chosen per dependency with future.then(strategy, f); the runtime measures, per strategy, the
// time from the dependency's completion to the successor's start (runtime_stats::successor_latency).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heddle {

enum class strategy : std::uint8_t {
  // Queued like any submission: on the completing worker's own deque, or the runtime's injection
  // queue when completed elsewhere (a service thread, a foreign thread). Best throughput; the
  // latency is however long the workers take to reach it.
  normal,
  // The priority lane: every worker looks at it at each task boundary, and a parked worker is woken.
  // The latency is at most the rest of the task a worker is running.
  express,
  // Runs on the thread that completes the dependency (an engine's service thread, the thread that
  // fulfils a promise), right away. For very short successors only: it holds that thread, and it
  // must not wait on futures. What it spawns goes out on the express lane.
  short_task,
  // Offered both to the workers (on the express lane) and to a small auxiliary thread pool; an
  // atomic claim makes exactly one of them run it. Latency close to a thread wake-up, at the price
  // of running beside the workers (an extra thread on the cores) while the pool runs it.
  asap,
};

inline constexpr std::size_t strategy_count = 4;

// How a plain then(f) successor starts when its source completes outside the runtime's workers (an
// async operation, a promise): the express lane costs no throughput and bounds the latency by one
// task (docs/async.md has the measurements behind the choice).
inline constexpr strategy default_strategy = strategy::express;

constexpr const char* to_string(strategy s) noexcept {
  switch (s) {
    case strategy::normal: return "normal";
    case strategy::express: return "express";
    case strategy::short_task: return "short_task";
    case strategy::asap: return "asap";
  }
  return "?";
}

}  // namespace heddle
