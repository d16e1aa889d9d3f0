// Spinning in the active-message layer: a pause for polling loops, and a lock for critical
// sections of a few loads and stores (a ring's write position, the pending table).
#pragma once

#include <sched.h>

#include <atomic>

#include "heddle/core/detail/futex.hpp"

namespace heddle::offload::detail {

// The n-th pause of a spinning loop. Every 256th yields the core: on a machine with no core to
// spare, the thread the spinner waits for (a lock's holder, a worker woken for a handler, the other
// node's poller) may be waiting for this one.
inline void spin_pause(unsigned n) noexcept {
  if ((n & 255) == 0) ::sched_yield();
  else heddle::detail::cpu_relax();
}

// One atomic exchange to take it, no system call.
class spin_lock {
 public:
  void lock() noexcept {
    for (unsigned n = 1; locked_.exchange(true, std::memory_order_acquire);)
      while (locked_.load(std::memory_order_relaxed)) spin_pause(n++);
  }
  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace heddle::offload::detail
