#include "heddle/core/task_group.hpp"

namespace heddle {

task_group::~task_group() {
  if (state_.load(std::memory_order_acquire) != 0) core_detail::group_wait(*this);
}

task_group_status task_group::wait() {
  core_detail::group_wait(*this);
  const bool was_cancelled = cancel_.cancelled();
  cancel_.reset();
  if (failed_.load(std::memory_order_acquire)) {
    std::exception_ptr e = std::move(error_);
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    std::rethrow_exception(e);
  }
  return was_cancelled ? task_group_status::cancelled : task_group_status::complete;
}

namespace core_detail {

bool runs_on_caller(const task_group& g) noexcept {
  const worker* w = current_worker;
  return w && w->core == g.core_;
}

}  // namespace core_detail

}  // namespace heddle
