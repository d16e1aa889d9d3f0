// SPDX-License-Identifier: Apache-2.0
// What every async operation's record shares: it is the future's state itself (the future the
// user holds points at it), is never queued as a task, and is completed once by whoever finishes
// the operation: the calling thread when it needs no waiting, an engine's service thread, or a
// thread cancelling it.
#pragma once

#include <atomic>
#include <exception>
#include <thread>
#include <utility>

#include "heddle/async/errors.hpp"
#include "heddle/core/detail/cancel_state.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/service.hpp"
#include "trace_kinds.hpp"

namespace heddle::async_detail {

// Traced, an operation is a span from its record's construction (its start) to the publication of
// its result, named by its kind ("timer", "read", ...: docs/trace.md).
template <class T>
class op_state : public core_detail::future_state<T> {
 public:
  template <class... A>
  void succeed(A&&... a) noexcept {
    try {
      this->set_value(std::forward<A>(a)...);
    } catch (...) {
      this->set_error(std::current_exception());
    }
    complete_traced();
  }
  void fail(std::exception_ptr e) noexcept {
    this->set_error(std::move(e));
    complete_traced();
  }
  // Completes with the result already stored.
  void complete_traced() noexcept {
    trace.end([this]() noexcept { this->complete(); });  // the record may be gone now
  }

  operation_span trace;

 protected:
  // `what`: the operation's name in traces (a literal), or nullptr for one that never started.
  op_state(const core_detail::future_vtable* vt, const char* what) noexcept : core_detail::future_state<T>(vt) {
    if (what) trace.start(what);
  }
};

// The vtable of a concrete operation record Op (derived from op_state).
template <class Op>
struct op_vtable {
  static void destroy(core_detail::future_state_base* b) noexcept { core_detail::free_record(static_cast<Op*>(b)); }
  static constexpr core_detail::future_vtable table{core_detail::not_a_task, nullptr, &destroy};
};

// Cancellations that took an operation from an engine and are still completing it (and starting
// its successor) on the cancelling thread. An engine's stop() waits for them, so that none is
// still running when the runtime goes.
class cancels_in_flight {
 public:
  void enter() noexcept { n_.fetch_add(1, std::memory_order_relaxed); }
  void leave() noexcept { n_.fetch_sub(1, std::memory_order_release); }
  void wait_none() const noexcept {
    while (n_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }

 private:
  std::atomic<int> n_{0};
};

// A cancel hook that knows its operation.
template <class Op>
struct op_cancel_hook : core_detail::cancel_hook {
  Op* op = nullptr;
};

// An operation that failed before it started (bad arguments, a stopping runtime): a ready future.
template <class T>
class failed_op final : public op_state<T> {
 public:
  failed_op() noexcept : op_state<T>(&op_vtable<failed_op>::table, nullptr) {}
};

template <class T>
core_detail::future_state<T>* failed(std::exception_ptr e) {
  auto* op = core_detail::make_record<failed_op<T>>();
  op->fail(std::move(e));
  return op;
}

inline std::exception_ptr cancelled_error() {
  return std::make_exception_ptr(operation_cancelled("heddle: the operation was cancelled"));
}
inline std::exception_ptr stopped_error() {
  return std::make_exception_ptr(task_cancelled("heddle: the runtime stopped before the operation completed"));
}

// The engine of kind E for `core`, made on first use: E(runtime_core*) must be constructible.
template <class E>
E& engine_of(core_detail::runtime_core* core) {
  static const unsigned id = core_detail::new_service_id();
  return static_cast<E&>(
      core_detail::service(core, id, [](core_detail::runtime_core* c) -> std::unique_ptr<core_detail::runtime_service> {
        return std::make_unique<E>(c);
      }));
}

}  // namespace heddle::async_detail
