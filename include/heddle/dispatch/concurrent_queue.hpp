// heddle::concurrent_queue: the runtime itself seen as a queue, for code written against queues.
// Items run as tasks, concurrently and in no particular order, on the same workers as every other
// task, future and serial queue of the runtime.
#pragma once

#include <chrono>
#include <type_traits>
#include <utility>

#include "heddle/async/timer.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/dispatch/detail/detached_task.hpp"

namespace heddle {

namespace dispatch_detail {
// Schedules `t` on `core` once `deadline` has passed; discards it if the runtime stops first.
void schedule_at(core_detail::runtime_core* core, std::chrono::steady_clock::time_point deadline,
                 core_detail::task_base* t);
}  // namespace dispatch_detail

class concurrent_queue {
 public:
  // The calling worker's runtime, or elsewhere the default runtime.
  concurrent_queue() : core_(core_detail::current_core()) {}
  explicit concurrent_queue(runtime& rt) noexcept : core_(rt.core()) {}

  // Runs f() as a task nobody waits for. An exception it throws is reported and terminates, as
  // one escaping a thread would (catch inside f what it may throw).
  template <class F>
  void async(F&& f) const {
    core_detail::schedule(
        core_, core_detail::make_record<dispatch_detail::detached_task<std::decay_t<F>>>(std::forward<F>(f)));
  }

  // Runs f() as a task and returns its result (helping while it waits, from a worker).
  template <class F>
  std::remove_cvref_t<std::invoke_result_t<F&>> sync(F&& f) const {
    auto* s = core_detail::make_task(std::forward<F>(f));
    core_detail::schedule(core_, s);
    future<std::remove_cvref_t<std::invoke_result_t<F&>>> result(core_detail::adopt, s, core_);
    return std::move(result).get();
  }

  // Runs f() as a task once `delay` has passed; the timer engine waits, no thread is held.
  template <class Rep, class Period, class F>
  void after(std::chrono::duration<Rep, Period> delay, F&& f) const {
    at(async_detail::deadline_after(delay), std::forward<F>(f));
  }
  template <class F>
  void at(std::chrono::steady_clock::time_point deadline, F&& f) const {
    dispatch_detail::schedule_at(
        core_, deadline, core_detail::make_record<dispatch_detail::detached_task<std::decay_t<F>>>(std::forward<F>(f)));
  }

  core_detail::runtime_core* core() const noexcept { return core_; }

 private:
  core_detail::runtime_core* core_;
};

}  // namespace heddle
