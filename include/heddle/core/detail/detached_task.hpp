// SPDX-License-Identifier: Apache-2.0
// A task nobody waits for: concurrent_queue().async(f), group.async on a concurrent queue, what
// async_detail::schedule_at starts at a deadline. Its record is freed once it has run or been
// discarded (a stopping runtime discards queued tasks); what its function throws has nowhere to go,
// so it is reported and the process terminates, as an exception escaping a thread would.
#pragma once

#include <exception>
#include <utility>

#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::core_detail {

// Prints "heddle: a detached task threw: <what()>" on stderr and terminates.
[[noreturn]] void report_detached_error(std::exception_ptr e) noexcept;

// What runs after a task's or an item's function (or instead of it, when discarded): nothing, or a
// group's leave for group.async.
struct no_epilogue {
  void operator()() const noexcept {}
};

// `After` runs once f has run (or thrown), and when the task is discarded. `Report` takes what f
// threw (the default terminates; a layer's may name the queue that ran it in its message).
template <class F, class After = no_epilogue, void (*Report)(std::exception_ptr) noexcept = &report_detached_error>
struct detached_task final : task_base {
  template <class G>
  explicit detached_task(G&& g, After a = {}) : task_base(&vtable), fn(std::forward<G>(g)), after(std::move(a)) {}
  F fn;
  After after;

  static void execute(task_base* t) noexcept {
    auto* self = static_cast<detached_task*>(t);
    try {
      self->fn();
    } catch (...) {
      Report(std::current_exception());
    }
    finish(self);
  }
  static void discard(task_base* t) noexcept { finish(static_cast<detached_task*>(t)); }
  static void finish(detached_task* self) noexcept {
    After a = std::move(self->after);
    free_record(self);
    a();
  }
  static constexpr task_vtable vtable{&execute, &discard};
};

}  // namespace heddle::core_detail
