// SPDX-License-Identifier: Apache-2.0
// The record behind `future.then(f)` and `future.then(strategy, f)`: waits attached to its source,
// then starts as its strategy says (strategy.hpp). Only the strategy form is timed: its latency
// from the source's completion to its own start goes to the runtime's stats.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::core_detail {

template <class T, class F>
struct continuation_result {
  using type = std::remove_cvref_t<std::invoke_result_t<F, T&&>>;
};
template <class F>
struct continuation_result<void, F> {
  using type = std::remove_cvref_t<std::invoke_result_t<F>>;
};
template <class T, class F>
using continuation_result_t = typename continuation_result<T, F>::type;

// How a successor record starts once its source is ready, and the latency it records: shared by
// then_state and chain_state (chain_state.hpp).
struct successor_start {
  runtime_core* home;
  strategy how;
  bool timed;  // the then(strategy, f) form, whose latency is recorded
  std::int64_t ready_ns = 0;

  void release(task_base* t) noexcept {
    if (!timed) {
      // Plain then(f). Released by a worker of its runtime (the source was a task): its deque, as
      // in fork-join code. Released anywhere else (an engine's service thread, a thread fulfilling
      // a promise): the default strategy for completions from outside, express, timed like any.
      worker* w = current_worker;
      if (w && w->core == home) [[likely]]
        return spawn_local(w, t);
      timed = true;
      how = default_strategy;
    }
    ready_ns = steady_now_ns();
    // Traced: a flow from this completion to the successor's start (record_latency), the
    // latency the runtime's histograms summarise.
    if (trace::on()) [[unlikely]]
      trace::emit_instant(trace::kind::flow_begin, nullptr, static_cast<std::uint16_t>(how), 0,
                          trace::flow_id(this, ready_ns));
    if (how == strategy::normal) schedule(home, t);
    else start_successor(home, t, how);
  }
  // Called when the successor starts running.
  void record_latency() const noexcept {
    if (!timed) return;
    record_successor_latency(home, how, ready_ns);
    if (trace::on()) [[unlikely]]
      trace::emit_instant(trace::kind::flow_end, nullptr, static_cast<std::uint16_t>(how), 0,
                          trace::flow_id(this, ready_ns));
  }
};

template <class U, class T, class F>
class then_state final : public future_state<U>, public continuation {
 public:
  // `timed`: the then(strategy, f) form, whose latency is recorded.
  template <class G>
  then_state(future_state<T>* src, G&& g, runtime_core* home, strategy how = strategy::normal, bool timed = false)
      : future_state<U>(&vtable), continuation{&on_source_ready}, src_(src), start_{home, how, timed} {
    ::new (static_cast<void*>(std::addressof(fn_))) F(std::forward<G>(g));
  }
  ~then_state() {}

  // Called once, right after construction: runs when the source is (or already was) ready.
  void start() {
    if (!src_->attach(this)) release_successor();
  }

 private:
  static void on_source_ready(continuation* c) noexcept { static_cast<then_state*>(c)->release_successor(); }

  void release_successor() noexcept { start_.release(this); }

  static void run(task_base* t) noexcept {
    auto* s = static_cast<then_state*>(t);
    s->start_.record_latency();
    if (const std::exception_ptr* e = s->src_->error()) {
      s->set_error(*e);
    } else {
      try {
        if constexpr (std::is_void_v<T>)
          s->set_value_from([s]() -> decltype(auto) { return std::invoke(std::move(s->fn_)); });
        else
          s->set_value_from([s]() -> decltype(auto) {
            return std::invoke(std::move(s->fn_), std::move(s->src_->value_ref()));
          });
      } catch (...) {
        s->set_error(std::current_exception());
      }
    }
    s->fn_.~F();
    s->src_->fvt()->destroy(s->src_);
  }
  static void execute(task_base* t) noexcept {
    run(t);
    static_cast<then_state*>(t)->complete();
  }
  static void discard(task_base* t) noexcept {
    auto* s = static_cast<then_state*>(t);
    s->fn_.~F();
    s->src_->fvt()->destroy(s->src_);
    s->set_error(shutdown_error());
    s->complete();
  }
  static void destroy(future_state_base* b) noexcept { free_record(static_cast<then_state*>(b)); }

  static constexpr future_vtable vtable{{&execute, &discard}, &run, &destroy};

  future_state<T>* src_;
  successor_start start_;
  union {
    F fn_;
  };
};

}  // namespace heddle::core_detail
