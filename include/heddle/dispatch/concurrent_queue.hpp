// SPDX-License-Identifier: Apache-2.0
// heddle::concurrent_queue: the runtime itself seen as a queue, for code written against queues.
// Items run as tasks, concurrently and in no particular order, on the same workers as every other
// task, future and serial queue of the runtime. A concurrent_queue is a plain reference to its
// runtime: every call is thread-safe, from any thread.
#pragma once

#include <chrono>
#include <exception>
#include <type_traits>
#include <utility>

#include "heddle/async/detail/deadline.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/detached_task.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/dispatch/detail/queue_item.hpp"

namespace heddle {

namespace dispatch_detail {
struct access;

// What a concurrent queue's task reports its function's exception with: as an item of a queue
// without an error handler (report and terminate), naming the concurrent queue.
inline void report_concurrent_error(std::exception_ptr e) noexcept { report_item_error(nullptr, std::move(e)); }

// concurrent_queue().async(f), group.async on a concurrent queue: a task nobody waits for, which
// reports as the concurrent queue's.
template <class F, class After = core_detail::no_epilogue>
using concurrent_task = core_detail::detached_task<F, After, &report_concurrent_error>;
}  // namespace dispatch_detail

class concurrent_queue {
 public:
  // The calling worker's runtime, or elsewhere the default runtime. Thread-safe.
  concurrent_queue() : core_(core_detail::current_core()) {}
  explicit concurrent_queue(runtime& rt) noexcept : core_(core_detail::access::core_of(rt)) {}

  // Runs f() as a task nobody waits for. An exception it throws is reported and terminates, as
  // one escaping a thread would (catch inside f what it may throw). Thread-safe; never waits.
  template <class F>
  void async(F&& f) const {
    core_detail::schedule(
        core_, core_detail::make_record<dispatch_detail::concurrent_task<std::decay_t<F>>>(std::forward<F>(f)));
  }

  // Runs f() as a task and returns its result. Thread-safe; blocks until f() has run: a worker runs
  // other tasks meanwhile, another thread sleeps.
  template <class F>
  std::remove_cvref_t<std::invoke_result_t<F&>> sync(F&& f) const {
    auto* s = core_detail::make_task(std::forward<F>(f));
    core_detail::schedule(core_, s);
    future<std::remove_cvref_t<std::invoke_result_t<F&>>> result(core_detail::adopt, s, core_);
    return std::move(result).get();
  }

  // Runs f() as a task once `delay` has passed; the timer engine waits, no thread is held.
  // Thread-safe; never waits.
  template <class Rep, class Period, class F>
  void after(std::chrono::duration<Rep, Period> delay, F&& f) const {
    at(async_detail::deadline_after(delay), std::forward<F>(f));
  }
  template <class F>
  void at(std::chrono::steady_clock::time_point deadline, F&& f) const {
    async_detail::schedule_at(
        core_, deadline,
        core_detail::make_record<dispatch_detail::concurrent_task<std::decay_t<F>>>(std::forward<F>(f)));
  }

 private:
  friend struct dispatch_detail::access;  // core_of: for groups
  core_detail::runtime_core* core_;
};

}  // namespace heddle
