// SPDX-License-Identifier: Apache-2.0
// Timers as futures: heddle::sleep_for(10ms) holds no thread while it waits. A runtime's timer
// engine (one service thread, started on first use) keeps every pending timer of that runtime in
// a heap and sleeps in the kernel until the earliest is due.
//
// Contract: a timer never completes before its deadline (steady_clock); timers with the same
// deadline complete in the order they were started, and a timer with an earlier deadline
// completes no later than one with a later deadline. A timer started with a token that is then
// cancelled completes at once with operation_cancelled. When the runtime stops, pending timers
// complete with task_cancelled.
//
// Calling: every call is thread-safe and may be made from any thread (a worker, a thread outside
// every runtime, a service thread running a short_task successor). A call with a runtime starts
// the timer on it (`rt` must be alive; a stopping one gives a future failed with task_cancelled).
// Without one, the timer belongs to the calling thread's runtime: its worker's, the one it runs a
// successor for or has entered (runtime::execute), else the default runtime, started on first
// use. Its successors run there.
#pragma once

#include <chrono>

#include "heddle/async/detail/deadline.hpp"
#include "heddle/async/detail/start_op.hpp"
#include "heddle/async/errors.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

namespace async_detail {
HEDDLE_EXPORT core_detail::future_state<void>* start_timer(core_detail::runtime_core* core,
                                                           std::chrono::steady_clock::time_point deadline,
                                                           const cancellation_token& token);
}  // namespace async_detail

// Ready once `deadline` has passed.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<void> sleep_until(runtime& rt, std::chrono::steady_clock::time_point deadline,
                                const cancellation_token& token = {}) {
  return async_detail::start_on<async_detail::start_timer>(rt, deadline, token);
}
inline future<void> sleep_until(std::chrono::steady_clock::time_point deadline, const cancellation_token& token = {}) {
  return async_detail::start_here<async_detail::start_timer>(deadline, token);
}

// Ready once `d` has passed (d beyond the clock's range: never, unless cancelled or stopped).
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
template <class Rep, class Period>
future<void> sleep_for(runtime& rt, std::chrono::duration<Rep, Period> d, const cancellation_token& token = {}) {
  return sleep_until(rt, async_detail::deadline_after(d), token);
}
template <class Rep, class Period>
future<void> sleep_for(std::chrono::duration<Rep, Period> d, const cancellation_token& token = {}) {
  return sleep_until(async_detail::deadline_after(d), token);
}

}  // namespace heddle
