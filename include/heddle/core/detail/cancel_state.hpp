// SPDX-License-Identifier: Apache-2.0
// The flag behind a cancellation source or a task group, and the hooks that pending operations
// (a timer, a read waiting for data) register on it so that cancelling reaches them at once
// instead of when they next poll.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "heddle/core/export.hpp"

namespace heddle::core_detail {

struct cancel_hook {
  // Called once, on the cancelling thread, outside any lock of the cancel state. It must call
  // finish_firing() once it no longer needs its operation kept alive by a concurrent remove(), and
  // touch the hook no more after that (the operation may then be freed). It may start or cancel
  // other operations with the same token.
  void (*fire)(cancel_hook*) noexcept = nullptr;
  void finish_firing() noexcept { stage.store(fired, std::memory_order_release); }

  cancel_hook* prev = nullptr;
  cancel_hook* next = nullptr;
  // armed -> firing -> fired by cancel(); armed -> removed by remove().
  enum : std::uint8_t { idle, armed, firing, fired, removed };
  std::atomic<std::uint8_t> stage{idle};
};

class HEDDLE_EXPORT cancel_state {
 public:
  bool cancelled() const noexcept { return flag.load(std::memory_order_relaxed); }

  // Sets the flag and fires every hook registered at that moment.
  void cancel() noexcept {
    flag.store(true, std::memory_order_seq_cst);
    if (!maybe_hooks_.load(std::memory_order_seq_cst)) return;
    for (;;) {
      cancel_hook* h;
      {
        std::lock_guard lock(m_);
        h = head_;
        if (!h) return;
        unlink(h);
        h->stage.store(cancel_hook::firing, std::memory_order_relaxed);
      }
      h->fire(h);  // h may be gone now
    }
  }

  // Registers h; false (nothing registered) when already cancelled.
  bool add(cancel_hook* h) noexcept {
    std::lock_guard lock(m_);
    maybe_hooks_.store(true, std::memory_order_seq_cst);
    if (flag.load(std::memory_order_seq_cst)) return false;
    h->stage.store(cancel_hook::armed, std::memory_order_relaxed);
    h->prev = nullptr;
    h->next = head_;
    if (head_) head_->prev = h;
    head_ = h;
    return true;
  }

  // Takes h off the list; if cancel() is firing it right now, waits until the hook has finished
  // firing, so that the caller may then free what the hook uses.
  void remove(cancel_hook* h) noexcept {
    {
      std::lock_guard lock(m_);
      if (h->stage.load(std::memory_order_relaxed) == cancel_hook::armed) {
        unlink(h);
        h->stage.store(cancel_hook::removed, std::memory_order_relaxed);
        return;
      }
    }
    while (h->stage.load(std::memory_order_acquire) == cancel_hook::firing) spin_pause();
  }

  // Re-arms a task group for reuse (no hooks may be registered then).
  void reset() noexcept { flag.store(false, std::memory_order_relaxed); }

  std::atomic<bool> flag{false};

 private:
  static void spin_pause() noexcept;  // src/core/successors.cpp: a yield
  void unlink(cancel_hook* h) noexcept {
    if (h->prev) h->prev->next = h->next;
    else head_ = h->next;
    if (h->next) h->next->prev = h->prev;
    h->prev = h->next = nullptr;
  }

  std::atomic<bool> maybe_hooks_{false};
  std::mutex m_;
  cancel_hook* head_ = nullptr;
};

}  // namespace heddle::core_detail
