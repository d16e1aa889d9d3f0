// SPDX-License-Identifier: Apache-2.0
// Runs a function when a future<void>'s state completes, success or failure, on the completing
// thread (a timer's or the fd engine's service thread, a worker), without a task in between. For
// the layers above, where a `then` successor would not do: the hook must also run on failure, to
// discard what it holds, and it only hands work on (a task scheduled at a deadline, delayed
// items, an acquire's continuation: docs/architecture.md lists the users).
#pragma once

#include <exception>

#include "heddle/core/detail/future_state.hpp"

namespace heddle::core_detail {

struct completion_hook : continuation {
  // Called once, on the completing thread; `error` is null on success. It must not throw, and the
  // hook's own memory is its to free.
  void (*done)(completion_hook*, std::exception_ptr error) noexcept;
  future_state<void>* source = nullptr;

  explicit completion_hook(void (*d)(completion_hook*, std::exception_ptr) noexcept) noexcept
      : continuation{&on_ready}, done(d) {}

  // Takes ownership of `s` (a reference the caller held); runs done() once `s` is complete, now if
  // it already is. Called at most once per hook.
  void hook(future_state<void>* s) noexcept {
    source = s;
    if (!s->attach(this)) on_ready(this);
  }

 private:
  static void on_ready(continuation* c) noexcept {
    auto* h = static_cast<completion_hook*>(c);
    future_state<void>* s = h->source;
    std::exception_ptr e = s->error() ? *s->error() : nullptr;
    s->release();
    h->done(h, std::move(e));
  }
};

}  // namespace heddle::core_detail
