// SPDX-License-Identifier: Apache-2.0
// heddle::isolate: run a function whose waits take only the tasks it spawned (oneTBB's
// this_task_arena::isolate).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"

namespace heddle {

namespace core_detail {

// A fresh isolation region id, never 0 (ids wrap after 2^32 - 1 regions). One relaxed atomic add.
HEDDLE_EXPORT std::uint32_t new_isolation() noexcept;

// Puts the calling thread (as a worker, or as an outsider) in a fresh region; restores its
// previous one on exit.
class isolation_scope {
 public:
  isolation_scope() noexcept : worker_(current_worker), id_(new_isolation()) {
    if (worker_) {
      saved_ = worker_->isolation.load(std::memory_order_relaxed);
      worker_->isolation.store(id_, std::memory_order_relaxed);
    } else {
      saved_ = outside_isolation;
      outside_isolation = id_;
    }
  }
  ~isolation_scope() {
    if (worker_) worker_->isolation.store(saved_, std::memory_order_relaxed);
    else outside_isolation = saved_;
  }
  isolation_scope(const isolation_scope&) = delete;
  isolation_scope& operator=(const isolation_scope&) = delete;

 private:
  worker* worker_;
  std::uint32_t id_;
  std::uint32_t saved_ = 0;
};

}  // namespace core_detail

// Runs f() on the calling thread in a new isolation region and returns what f returns (exceptions
// propagate; the region ends either way). Every task spawned inside the region (by f, by those
// tasks, on any worker and any runtime) belongs to it. While f or one of those tasks waits (a
// future's get/wait, task_group::wait, an algorithm), the waiting worker runs only tasks of that
// region: never an unrelated task, which might take a lock the waiter holds (docs/core.md,
// "Isolation"). The workers' scheduling loops, which wait for nothing, still run tasks of any region.
//  - A region nested inside another is a region of its own: waits inside the inner one take only
//    the inner one's tasks, waits in the outer one only the outer one's (as in oneTBB).
//  - A waiter runs the task it awaits whatever its region, but a wait inside the region for other
//    work spawned outside it (or in a nested region) leaves that work to other workers: on a runtime
//    with one worker, such a wait never returns.
//  - On a thread outside the runtime, waits sleep anyway; isolation there only tags what it spawns.
// Costs one relaxed atomic add and two stores beyond f; an isolated waiter may steal a task of
// another region, which then goes back to the runtime's injection queue (counted in
// runtime_stats::isolation_requeues). Thread-safe: any thread, for itself; blocks while f runs.
template <class F>
decltype(auto) isolate(F&& f) {
  core_detail::isolation_scope scope;
  return std::invoke(std::forward<F>(f));
}

}  // namespace heddle
