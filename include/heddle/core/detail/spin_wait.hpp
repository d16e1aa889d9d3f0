// SPDX-License-Identifier: Apache-2.0
// heddle's one spin-then-park policy. A thread that waits for another thread (a worker with nothing
// to do, a waiter on a future, a queue's waiter, a transport's poller, a lock's taker) looks,
// pauses, looks again; once its budget is spent it parks: on a futex, in the parking lot, in a
// transport's sleep, in a short sleep, as its caller decides. Spinning first pays because a wake-up
// (a futex wake, then the scheduler running the thread again) costs more than the short waits of
// fork-join code and request-reply traffic; the budgets bound what a wait that is not short burns.
// Offered to the layers above (cmake/check_layer_includes.cmake); nothing here allocates or throws.
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "heddle/core/detail/futex.hpp"

namespace heddle::core_detail {

namespace spin {
// PAUSE hints between two looks at state that other threads write (a future's state, the deques):
// a look that finds a changed line costs a cache miss, and 32 PAUSEs (about 1 µs where PAUSE takes
// some 140 cycles, Skylake and later; a tenth of that on older cores) keep a waiter from pulling
// those lines away from their writers while it still sees a completion within a microsecond.
inline constexpr int pauses_per_look = 32;
// How long a worker spins before it parks, when it waits on a future or a queue: long enough to
// cover a child task's completion in fork-join code, short against a wake-up's cost. (An idle
// worker spins for runtime_options::spin_before_park instead, which the program may tune.)
inline constexpr std::chrono::microseconds worker_budget{20};
// How long a thread outside the runtime spins before it sleeps: shorter, because it finds no other
// work meanwhile and its core may be wanted by a worker.
inline constexpr std::chrono::microseconds outsider_budget{10};
// A loop that looks after every PAUSE (a transport's poll, a spin lock) yields its core every this
// many looks: on a machine with no core to spare, the thread it waits for (a preempted lock
// holder, a worker woken for a handler, the other node's poller) may be waiting for this core.
inline constexpr unsigned yield_every = 256;
}  // namespace spin

// The n-th pause of a loop that looks after every pause (n counts from 1): one PAUSE, and a
// sched_yield every spin::yield_every-th time.
inline void spin_pause(unsigned n) noexcept {
  if (n % spin::yield_every == 0) ::sched_yield();
  else cpu_relax();
}

// A waiter's spin before it parks: keep_spinning() after each look that found nothing.
class spin_then_park {
 public:
  // `budget`: how long to spin from the first keep_spinning() on (since construction or the last
  // restart()). `yield_core`: each pause is a sched_yield instead of PAUSEs (a runtime with more
  // workers than CPUs, where a spinning worker holds a core another worker needs).
  explicit spin_then_park(std::chrono::nanoseconds budget, bool yield_core = false) noexcept
      : budget_(budget), yield_core_(yield_core) {}

  // True after pausing (spin::pauses_per_look PAUSEs, or one sched_yield) while the budget lasts:
  // look again. False, without pausing, once it is spent: park now. One clock read per call.
  bool keep_spinning() noexcept {
    const auto now = clock::now();
    if (deadline_ == clock::time_point{}) deadline_ = now + budget_;
    else if (now >= deadline_) return false;
    if (yield_core_) {
      ::sched_yield();
    } else {
      for (int i = 0; i < spin::pauses_per_look; ++i) cpu_relax();
    }
    return true;
  }
  // The wait made progress (it ran a task, took a queue over): the next keep_spinning() starts a
  // new budget.
  void restart() noexcept { deadline_ = {}; }

 private:
  using clock = std::chrono::steady_clock;
  std::chrono::nanoseconds budget_;
  clock::time_point deadline_{};
  bool yield_core_;
};

// A lock for critical sections of a few loads and stores (a ring's write position, the pending
// table of calls, a ready queue's lane): one atomic exchange to take it, no system call; a taker
// that finds it held spins with spin_pause, so a preempted holder is given the core now and then.
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

// A lock whose holder may block (in a system call that waits for a socket, say): one compare-and-
// swap to take it and one exchange to let it go, inline, no call of the C library's mutex (whose
// lock and unlock cost some 60 instructions between them); a taker that finds it held spins for
// spin::outsider_budget, then sleeps on a futex until the holder lets go. The word: 0 free, 1 held,
// 2 held with a sleeper that the unlock wakes (the classic futex mutex).
class parking_mutex {
 public:
  bool try_lock() noexcept {
    std::uint32_t free = 0;
    return word_.compare_exchange_strong(free, 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void lock() noexcept {
    if (try_lock()) [[likely]]
      return;
    lock_slowly();
  }
  void unlock() noexcept {
    if (word_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
      futex_wake(word_, 1);
  }

 private:
  [[gnu::noinline]] void lock_slowly() noexcept {
    spin_then_park spinner(spin::outsider_budget);
    do {
      if (word_.load(std::memory_order_relaxed) == 0 && try_lock()) return;
    } while (spinner.keep_spinning());
    // Marked as having a sleeper before each sleep; whoever takes it this way keeps the mark (an
    // unlock then wakes one more sleeper than needed, at worst: it looks and sleeps again).
    while (word_.exchange(2, std::memory_order_acquire) != 0) futex_wait(word_, 2);
  }

  std::atomic<std::uint32_t> word_{0};
};

}  // namespace heddle::core_detail
