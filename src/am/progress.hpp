// SPDX-License-Identifier: Apache-2.0
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
// waking it) and looks again after 1 ms, then 2, 4 and 8 ms while callers keep the lock: a nap's
// end is a timer interrupt and a context switch on a core that a polling thread may be using, which
// a round trip in flight pays (docs/benchmarks.md, the offload call path's fifth step). A caller
// that gives up polling wakes it; what arrives after a caller's last poll waits for the nap's end,
// 8 ms at most.
//
// - a thread sending a long put (transfers.cpp) asks the receiver to step aside for the whole send,
//   which outlasts the yield bit (an unlock clears it): meanwhile the receiver, at the end of each
//   nap, looks at the wire once and naps again, rather than spin beside the sender (what a peer's
//   long frame needs from this side, such as mpi's receive for it, is still done).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "heddle/core/detail/futex.hpp"
#include "heddle/core/export.hpp"

namespace heddle::am_detail {

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
  // The receiver's naps while callers poll: the first, and the longest of those that follow it,
  // each twice the last.
  static constexpr std::chrono::milliseconds first_nap{1}, longest_nap{8};
  // The receiver's nap while a caller polls: `timeout` at most, or until wake_receiver().
  void nap(std::chrono::nanoseconds timeout) noexcept { heddle::core_detail::futex_wait(nap_, 0, timeout.count()); }
  void wake_receiver() noexcept { heddle::core_detail::futex_wake(nap_, 1); }
  // A long send by a thread of this process begins (and asks the holder to step aside) or ends.
  void begin_long_send() noexcept {
    long_sends_.fetch_add(1, std::memory_order_relaxed);
    ask_yield();
  }
  void end_long_send() noexcept { long_sends_.fetch_sub(1, std::memory_order_relaxed); }
  bool long_send_running() const noexcept { return long_sends_.load(std::memory_order_relaxed) != 0; }

 private:
  alignas(64) std::atomic<std::uint32_t> word_{0};
  alignas(64) std::atomic<std::uint32_t> nap_{0};  // never changes: a futex to sleep on
  std::atomic<int> long_sends_{0};                 // changes once per long send: shares nap_'s line
};

// True on the thread that holds a progress lock: it must not block in a send. Initial-exec (as
// heddle's other thread-locals in its libraries): read on every send, it costs no __tls_get_addr
// call in the shared build.
inline constinit thread_local bool polling_thread HEDDLE_DETAIL_TLS_MODEL = false;

}  // namespace heddle::am_detail
