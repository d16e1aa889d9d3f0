// SPDX-License-Identifier: Apache-2.0
// A FIFO of ready task records shared by many producers and consumers: the injection queue and the
// express lane. Submissions from outside the workers are rare next to spawns, so a mutex is plenty;
// what matters is that looking at an empty queue costs one relaxed load.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/task_record.hpp"

namespace heddle::core_detail {

class task_queue {
 public:
  void push(task_base* t) {
    t->next = nullptr;
    std::lock_guard lock(m_);
    HEDDLE_ASSERT((head_ == nullptr) == (tail_ == nullptr), "a task queue with a head and no tail, or the reverse");
    if (tail_) tail_->next = t;
    else head_ = t;
    tail_ = t;
    size_.fetch_add(1, std::memory_order_relaxed);
  }

  task_base* pop() {
    if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
    std::lock_guard lock(m_);
    task_base* t = head_;
    if (!t) return nullptr;
    // The count changes under the lock with the list; a reader without it only looks for zero.
    HEDDLE_ASSERT(size_.load(std::memory_order_relaxed) > 0, "a task queue's count says empty while it holds a task");
    head_ = t->next;
    if (!head_) tail_ = nullptr;
    size_.fetch_sub(1, std::memory_order_relaxed);
    return t;
  }

  bool maybe_nonempty() const noexcept { return size_.load(std::memory_order_relaxed) != 0; }
  // The count maybe_nonempty reads, for code inlined into programs that looks at it through a
  // worker (worker::express_waiting) without seeing this class.
  const std::atomic<std::size_t>* size_word() const noexcept { return &size_; }

 private:
  std::mutex m_;
  task_base* head_ = nullptr;
  task_base* tail_ = nullptr;
  std::atomic<std::size_t> size_{0};
};

}  // namespace heddle::core_detail
