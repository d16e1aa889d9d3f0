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
// Without a runtime argument the operation belongs to the calling worker's runtime (or, on a
// thread outside every runtime, to the default runtime); its successors run there.
#pragma once

#include <chrono>

#include "heddle/async/detail/deadline.hpp"
#include "heddle/async/errors.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

namespace async_detail {
HEDDLE_EXPORT core_detail::future_state<void>* start_timer(core_detail::runtime_core* core,
                                             std::chrono::steady_clock::time_point deadline,
                                             const cancellation_token& token);
}  // namespace async_detail

inline future<void> sleep_until(runtime& rt, std::chrono::steady_clock::time_point deadline,
                                const cancellation_token& token = {}) {
  return {core_detail::adopt, async_detail::start_timer(core_detail::access::core_of(rt), deadline, token), core_detail::access::core_of(rt)};
}
inline future<void> sleep_until(std::chrono::steady_clock::time_point deadline, const cancellation_token& token = {}) {
  core_detail::runtime_core* core = core_detail::current_core();
  return {core_detail::adopt, async_detail::start_timer(core, deadline, token), core};
}

template <class Rep, class Period>
future<void> sleep_for(runtime& rt, std::chrono::duration<Rep, Period> d, const cancellation_token& token = {}) {
  return sleep_until(rt, async_detail::deadline_after(d), token);
}
template <class Rep, class Period>
future<void> sleep_for(std::chrono::duration<Rep, Period> d, const cancellation_token& token = {}) {
  return sleep_until(async_detail::deadline_after(d), token);
}

}  // namespace heddle
