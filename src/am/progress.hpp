// Who polls the transport. One thread at a time holds the progress lock and polls:
//
// - the receiver thread, a thread of the session's own, whenever nobody else wants to: it polls for
//   options.receiver_spin after the last frame, then sleeps in the transport (a sender or the
//   kernel wakes it);
// - a thread waiting in sync() that is not a worker: it asks the receiver to step aside (the yield
//   bit), takes the lock and polls for its own reply, so that a round trip costs the transport's
//   latency and no thread is woken on either side. After options.caller_spin it gives the lock
//   back, wakes the receiver and sleeps on its future.
//
// While a caller polls, the receiver naps (not in the transport, so that senders do not pay for
// waking it) and looks again every millisecond; a caller that gives up polling wakes it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "heddle/core/detail/futex.hpp"

namespace heddle::offload::detail {

class progress {
 public:
  static constexpr std::uint32_t held = 1;
  static constexpr std::uint32_t yield_asked = 2;

  bool try_lock() noexcept {
    std::uint32_t w = word_.load(std::memory_order_relaxed);
    if (w & held) return false;
    return word_.compare_exchange_strong(w, held, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept { word_.store(0, std::memory_order_release); }
  // Asks the holder to step aside at its next look.
  void ask_yield() noexcept {
    if (!(word_.load(std::memory_order_relaxed) & yield_asked)) word_.fetch_or(yield_asked, std::memory_order_relaxed);
  }
  bool yield_wanted() const noexcept { return word_.load(std::memory_order_relaxed) & yield_asked; }
  // The receiver's nap while a caller polls: `timeout` at most, or until wake_receiver().
  void nap(std::chrono::nanoseconds timeout) noexcept { heddle::core_detail::futex_wait(nap_, 0, timeout.count()); }
  void wake_receiver() noexcept { heddle::core_detail::futex_wake(nap_, 1); }

 private:
  alignas(64) std::atomic<std::uint32_t> word_{0};
  alignas(64) std::atomic<std::uint32_t> nap_{0};  // never changes: a futex to sleep on
};

// True on the thread that holds a progress lock: it must not block in a send.
inline thread_local bool polling_thread = false;

}  // namespace heddle::offload::detail
