// Cooperative cancellation: a source says "stop", tokens let running tasks notice.
#pragma once

#include <atomic>
#include <memory>

namespace heddle {

// A cheap view of a cancellation flag that a running task polls. Copies share the flag.
class cancellation_token {
 public:
  cancellation_token() noexcept = default;  // never cancelled
  bool cancelled() const noexcept { return flag_ && flag_->load(std::memory_order_relaxed); }
  explicit operator bool() const noexcept { return cancelled(); }

 private:
  friend class cancellation_source;
  friend class task_group;
  cancellation_token(const std::atomic<bool>* flag, std::shared_ptr<const void> keep) noexcept
      : flag_(flag), keep_(std::move(keep)) {}
  const std::atomic<bool>* flag_ = nullptr;
  std::shared_ptr<const void> keep_;  // keeps a source's flag alive; empty for a task_group's token
};

// Owns a flag; cancel() is seen by every token made from it, from any thread.
class cancellation_source {
 public:
  cancellation_source() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() noexcept { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return flag_->load(std::memory_order_relaxed); }
  cancellation_token token() const noexcept { return {flag_.get(), flag_}; }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace heddle
