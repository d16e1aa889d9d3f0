// A lock for critical sections of a few loads and stores (a ring's write position, the pending
// table): one atomic exchange to take it, no system call. A waiter yields the core now and then,
// since on a machine with no core to spare the holder may be waiting for this one.
#pragma once

#include <sched.h>

#include <atomic>

#include "heddle/core/detail/futex.hpp"

namespace heddle::offload::detail {

class spin_lock {
 public:
  void lock() noexcept {
    for (unsigned n = 1; locked_.exchange(true, std::memory_order_acquire); ++n) {
      while (locked_.load(std::memory_order_relaxed)) {
        if ((++n & 127) == 0) ::sched_yield();
        else heddle::detail::cpu_relax();
      }
    }
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace heddle::offload::detail
