// SPDX-License-Identifier: Apache-2.0
// Cooperative cancellation: a source says "stop", tokens let running tasks notice and cancel the
// pending operations (timers, socket reads...) that were started with them.
//
// Thread safety: every call below is thread-safe, from any thread (one token or source object is
// assigned or destroyed only while no other thread uses that object, as any value).
#pragma once

#include <memory>

#include "heddle/core/detail/cancel_state.hpp"

namespace heddle {

namespace core_detail {
struct access;
}  // namespace core_detail

// A cheap view of a cancellation flag that a running task polls, or that an async operation takes
// to be cancellable. Copies share the flag.
class [[nodiscard]] cancellation_token {
 public:
  cancellation_token() noexcept = default;  // never cancelled
  // Whether the source was cancelled. Thread-safe.
  bool cancelled() const noexcept { return state_ && state_->cancelled(); }
  explicit operator bool() const noexcept { return cancelled(); }

 private:
  friend struct core_detail::access;  // state_of: for the operations that register cancel hooks
  friend class cancellation_source;
  friend class task_group;
  cancellation_token(core_detail::cancel_state* state, std::shared_ptr<const void> keep) noexcept
      : state_(state), keep_(std::move(keep)) {}
  core_detail::cancel_state* state_ = nullptr;
  std::shared_ptr<const void> keep_;  // keeps a source's state alive; empty for a task_group's token
};

// Owns a flag; cancel() is seen by every token made from it, from any thread, and cancels the
// operations pending with those tokens (their futures fail with operation_cancelled).
class cancellation_source {
 public:
  cancellation_source() : state_(std::make_shared<core_detail::cancel_state>()) {}
  // Sets the flag and cancels the pending operations, on the calling thread. Thread-safe; never
  // waits for a cancelled operation to end; any number of calls.
  void cancel() noexcept { state_->cancel(); }
  // Whether cancel() was called. Thread-safe.
  bool cancelled() const noexcept { return state_->cancelled(); }
  // A token of this source's flag. Thread-safe.
  cancellation_token token() const noexcept { return {state_.get(), state_}; }

 private:
  std::shared_ptr<core_detail::cancel_state> state_;
};

}  // namespace heddle
