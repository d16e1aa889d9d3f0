// SPDX-License-Identifier: Apache-2.0
// heddle's engines for oneTBB programs: the successor of a heddle future (a timer, a socket read, a
// file read, a child process, a promise) runs as a task inside a oneTBB task_arena, so that code built
// on oneTBB can wait on I/O and timers without blocking its threads and without a heddle worker pool
// doing the work.
//
//   oneapi::tbb::task_arena arena;
//   auto done = heddle::then_in_arena(heddle::io::read(rt, fd, buf), arena, [](std::size_t n) { ... });
//
// The successor is enqueued (task_arena::enqueue) on the thread that completes the source, and its
// result or exception comes back through the returned future. The arena must outlive the successor.
// Not included by <heddle/heddle.hpp>: include it where oneTBB is available and link TBB::tbb.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

#include "heddle/async/promise.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/continuation_state.hpp"

namespace heddle {

namespace async_detail {

template <class U, class T, class F>
class arena_successor final : public core_detail::continuation {
 public:
  arena_successor(core_detail::future_state<T>* src, oneapi::tbb::task_arena& arena, F f)
      : core_detail::continuation{&on_ready}, src_(src), arena_(arena), fn_(std::move(f)) {}

  future<U> result() { return out_.get_future(); }

  // Runs on_ready when the source is (or already was) ready.
  void start() {
    if (!src_->attach(this)) on_ready(this);
  }

 private:
  static void on_ready(core_detail::continuation* c) noexcept {
    auto* self = static_cast<arena_successor*>(c);
    try {
      self->arena_.enqueue([self] { self->run(); });
    } catch (...) {  // no memory for the oneTBB task: fail the result here
      self->out_.set_exception(std::current_exception());
      self->finish();
    }
  }

  void run() noexcept {
    try {
      if (const std::exception_ptr* e = src_->error()) out_.set_exception(*e);
      else if constexpr (std::is_void_v<T> && std::is_void_v<U>) std::invoke(std::move(fn_)), out_.set_value();
      else if constexpr (std::is_void_v<T>) out_.set_value(std::invoke(std::move(fn_)));
      else if constexpr (std::is_void_v<U>) std::invoke(std::move(fn_), std::move(src_->value_ref())), out_.set_value();
      else out_.set_value(std::invoke(std::move(fn_), std::move(src_->value_ref())));
    } catch (...) {
      out_.set_exception(std::current_exception());
    }
    finish();
  }

  void finish() noexcept {
    src_->fvt()->destroy(src_);
    delete this;
  }

  core_detail::future_state<T>* src_;
  oneapi::tbb::task_arena& arena_;
  F fn_;
  promise<U> out_;
};

}  // namespace async_detail

// Runs f(value) (f() for future<void>) in `arena` once `source` is ready; an exception stored in
// `source` skips f and is passed on. Consumes `source`.
// Thread-safe; any thread (the one holding `source`).
template <class T, class F>
auto then_in_arena(future<T>&& source, oneapi::tbb::task_arena& arena, F&& f) {
  if (!source.valid()) throw invalid_future("heddle::then_in_arena: the source future has no state");
  using U = core_detail::continuation_result_t<T, std::decay_t<F>>;
  auto* node = new async_detail::arena_successor<U, T, std::decay_t<F>>(
      core_detail::access::state_of(std::move(source)), arena, std::forward<F>(f));
  future<U> out = node->result();
  node->start();
  return out;
}

}  // namespace heddle
