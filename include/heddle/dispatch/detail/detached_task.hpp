// A task nobody waits for: concurrent_queue().async(f). Its record is freed when it has run; what
// it throws is reported as an async item's exception is (and terminates).
#pragma once

#include <exception>
#include <utility>

#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/dispatch/detail/queue_item.hpp"

namespace heddle::dispatch_detail {

// `After` runs once f has run (or thrown), and when the task is discarded: a group's leave.
template <class F, class After = no_epilogue>
struct detached_task final : core_detail::task_base {
  template <class G>
  explicit detached_task(G&& g, After a = {})
      : core_detail::task_base(&vtable), fn(std::forward<G>(g)), after(std::move(a)) {}
  F fn;
  After after;

  static void execute(core_detail::task_base* t) noexcept {
    auto* self = static_cast<detached_task*>(t);
    try {
      self->fn();
    } catch (...) {
      report_item_error(nullptr, std::current_exception());
    }
    finish(self);
  }
  static void discard(core_detail::task_base* t) noexcept { finish(static_cast<detached_task*>(t)); }
  static void finish(detached_task* self) noexcept {
    After a = std::move(self->after);
    core_detail::free_record(self);
    a();
  }
  static constexpr core_detail::task_vtable vtable{&execute, &discard};
};

}  // namespace heddle::dispatch_detail
