// Runs a function when a future<void>'s state completes, success or failure, on the completing
// thread (a timer's or the fd engine's service thread), without a task in between. The dispatch
// layer uses it where a `then` successor would not do: it must also run on failure, to discard
// what it holds, and it only hands work on to a queue.
#pragma once

#include <exception>

#include "heddle/core/detail/future_state.hpp"

namespace heddle::dispatch_detail {

struct completion_hook : core_detail::continuation {
  // `error` is null on success. The hook's own memory is the callee's to free.
  void (*done)(completion_hook*, std::exception_ptr error) noexcept;
  core_detail::future_state<void>* source = nullptr;

  explicit completion_hook(void (*d)(completion_hook*, std::exception_ptr) noexcept) noexcept
      : core_detail::continuation{&on_ready}, done(d) {}

  // Takes ownership of `s`; runs done() once it is complete (now, if it already is).
  void hook(core_detail::future_state<void>* s) noexcept {
    source = s;
    if (!s->attach(this)) on_ready(this);
  }

 private:
  static void on_ready(core_detail::continuation* c) noexcept {
    auto* h = static_cast<completion_hook*>(c);
    core_detail::future_state<void>* s = h->source;
    std::exception_ptr e = s->error() ? *s->error() : nullptr;
    s->release();
    h->done(h, std::move(e));
  }
};

}  // namespace heddle::dispatch_detail
