// SPDX-License-Identifier: Apache-2.0
#include "heddle/core/task_group.hpp"

#include <stdexcept>

namespace heddle {

namespace core_detail {

// The record behind wait_async's future, and the group's waiter once armed: the finisher of the
// group's last task calls it (task_group::finish_one), which takes the group's status and error,
// lets the group go (bit 0 of its state cleared: its destructor may run from then on) and then
// completes the future. Never queued as a task.
class group_wait_state final : public future_state<task_group_status>, public continuation {
 public:
  explicit group_wait_state(task_group* g) noexcept
      : future_state<task_group_status>(&vtable), continuation{&on_ready}, group_(g) {}

  // Stores the group's status or error; the group is reset for its next use.
  void take_result() noexcept {
    std::exception_ptr error;
    const task_group_status status = group_->reset_after_wait(error);
    if (error) set_error(std::move(error));
    else set_value(status);
  }

 private:
  static void on_ready(continuation* c) noexcept {
    auto* s = static_cast<group_wait_state*>(c);
    task_group* g = s->group_;
    s->take_result();
    g->state_.fetch_and(~std::uint64_t{1}, std::memory_order_acq_rel);  // the group may go now
    s->complete();
  }
  static void destroy(future_state_base* b) noexcept { free_record(static_cast<group_wait_state*>(b)); }
  static constexpr future_vtable vtable{not_a_task, nullptr, &destroy};

  task_group* group_;
};

}  // namespace core_detail

task_group::~task_group() {
  if (state_.load(std::memory_order_acquire) != 0) core_detail::group_wait(*this);
}

task_group_status task_group::reset_after_wait(std::exception_ptr& error) noexcept {
  const bool was_cancelled = cancel_.cancelled();
  cancel_.reset();
  if (failed_.load(std::memory_order_acquire)) {
    error = std::move(error_);
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
  }
  return was_cancelled ? task_group_status::cancelled : task_group_status::complete;
}

task_group_status task_group::wait() {
  core_detail::group_wait(*this);
  std::exception_ptr error;
  const task_group_status status = reset_after_wait(error);
  if (error) std::rethrow_exception(std::move(error));
  return status;
}

future<task_group_status> task_group::wait_async() {
  // Bit 0 set: a wait is armed already (one at a time); its waiter_ must not be replaced.
  if (state_.load(std::memory_order_acquire) & 1)
    throw std::logic_error("heddle::task_group::wait_async: the group has a wait pending already (one wait at a time)");
  auto* s = core_detail::make_record<core_detail::group_wait_state>(this);
  future<task_group_status> f(core_detail::adopt, s, core_);
  waiter_.store(s, std::memory_order_release);
  std::uint64_t st = state_.load(std::memory_order_acquire);
  while (st != 0)
    if (state_.compare_exchange_weak(st, st | 1, std::memory_order_acq_rel, std::memory_order_acquire)) return f;
  // No task unfinished: ready now.
  s->take_result();
  s->complete();
  return f;
}

namespace core_detail {

bool runs_on_caller(const task_group& g) noexcept {
  const worker* w = current_worker;
  return w && w->core == g.core_;
}

}  // namespace core_detail

}  // namespace heddle
