// SPDX-License-Identifier: Apache-2.0
#include "receiver.hpp"

#include <algorithm>

#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/spin_wait.hpp"

namespace heddle::am_detail {

receiver::receiver(transport& wire, progress& lock, std::chrono::nanoseconds spin, std::function<void()> between_polls,
                   std::function<void()> run_held)
    : wire_(wire),
      progress_(lock),
      spin_(spin),
      between_polls_(std::move(between_polls)),
      run_held_(std::move(run_held)) {}

receiver::~receiver() { stop(); }

void receiver::start() {
  threads_[0] = std::thread([this] { thread_main(0); });
  threads_[1] = std::thread([this] { thread_main(1); });
}

void receiver::stop() {
  if (!threads_[0].joinable()) return;
  stop_ = true;
  wire_.interrupt();
  progress_.wake_receiver();
  wake_standby();
  for (std::thread& t : threads_) t.join();
}

void receiver::thread_main(int me) {
  while (!stop_.load(std::memory_order_acquire)) {
    if (role_.load(std::memory_order_acquire) == me) receive(me);
    else stand_by(me);
  }
}

void receiver::wake_standby() noexcept {
  standby_asleep_.store(0, std::memory_order_relaxed);
  heddle::core_detail::futex_wake(standby_asleep_, 1);
}

bool receiver::run_held_call(int me) {
  held_ = false;
  receiving_turn = false;
  polling_thread = false;
  progress_.unlock();  // whoever waits for a reply meanwhile polls for it
  const std::uint64_t n = running_[me].load(std::memory_order_relaxed) + 1;
  // Against the standby's going to sleep (stand_by): the mark, then the look at its flag.
  running_[me].store(n, std::memory_order_seq_cst);
  if (standby_asleep_.load(std::memory_order_seq_cst)) [[unlikely]]
    wake_standby();
  run_held_();
  running_[me].store(n + 1, std::memory_order_release);
  return role_.load(std::memory_order_acquire) == me;
}

void receiver::stand_by(int me) {
  standby_ready_.store(true, std::memory_order_release);
  const int other = 1 - me;
  std::uint64_t last = running_[other].load(std::memory_order_acquire);
  unsigned quiet = 0;
  // Until the next held call (run_held_call wakes this thread). It starts so: a session whose calls
  // are never held (short_task, express, no default call yet) never has this thread tick beside
  // its pollers, whose round trips a tick's wake-up on a full machine would slow. Never while a held
  // call runs (`last` odd: this thread came back from a call the other took over from, and the
  // other is in one now): that call could block, with nobody to take over; the ticks watch it.
  const auto sleep_until_a_held_call = [&] {
    if (last & 1) return;
    standby_asleep_.store(1, std::memory_order_seq_cst);
    if (running_[other].load(std::memory_order_seq_cst) == last && !stop_.load(std::memory_order_acquire))
      heddle::core_detail::futex_wait(standby_asleep_, 1);
    standby_asleep_.store(0, std::memory_order_relaxed);
    quiet = 0;
    last = running_[other].load(std::memory_order_acquire);
  };
  sleep_until_a_held_call();
  while (!stop_.load(std::memory_order_acquire)) {
    heddle::core_detail::futex_wait(tick_, 0, std::chrono::nanoseconds(standby_tick).count());
    const std::uint64_t now = running_[other].load(std::memory_order_acquire);
    if ((now & 1) && now == last) {
      // One held call running at two looks in a row: this thread receives from here on.
      standby_ready_.store(false, std::memory_order_relaxed);
      role_.store(me, std::memory_order_release);
      return;
    }
    quiet = now == last ? quiet + 1 : 0;
    last = now;
    if (quiet >= quiet_ticks) sleep_until_a_held_call();  // no held call for a while
  }
}

void receiver::receive(int me) {
  using clock = std::chrono::steady_clock;
  // While callers poll, each nap is longer than the last, up to progress::longest_nap: the end of a
  // nap is a timer interrupt and a context switch on a core that a polling caller (or, on a full
  // machine, the peer's poller) is using (progress.hpp).
  auto nap = progress::first_nap;
  const auto nap_for_caller = [&] {
    progress_.nap(nap);
    nap = std::min(nap * 2, progress::longest_nap);
  };
  while (!stop_.load(std::memory_order_acquire)) {
    if (!progress_.try_lock()) {
      nap_for_caller();
      between_polls_();
      continue;
    }
    if (progress_.long_send_running()) [[unlikely]] {
      // One look at the wire, then the cores are the long send's and its target's (progress.hpp).
      polling_thread = true;
      for (int n = 0; n < 64 && wire_.poll(); ++n) {
      }
      polling_thread = false;
      progress_.unlock();
      progress_.nap(std::chrono::milliseconds(1));
      between_polls_();
      continue;
    }
    polling_thread = true;
    receiving_turn = true;
    auto idle_since = clock::now();
    bool go_to_sleep = false, lock_lost = false;
    for (unsigned n = 1;; ++n) {
      if (stop_.load(std::memory_order_relaxed) || progress_.yield_wanted()) break;
      if (wire_.poll()) {
        n = 0;
        if (held_) {
          if (!run_held_call(me)) return;  // replaced meanwhile: this thread stands by
          if (!progress_.try_lock()) {     // a caller polls now
            lock_lost = true;
            break;
          }
          polling_thread = true;
          receiving_turn = true;
        }
        continue;
      }
      if ((n & 63) == 0) {
        const auto now = clock::now();
        if (n == 64) idle_since = now;  // the first look after the last frame
        if (now - idle_since > spin_) {
          go_to_sleep = true;
          break;
        }
        between_polls_();
      }
      heddle::core_detail::spin_pause(n);
    }
    receiving_turn = false;
    polling_thread = false;
    const bool yielded = lock_lost || progress_.yield_wanted();
    if (!lock_lost) progress_.unlock();
    if (stop_.load(std::memory_order_acquire)) break;
    if (yielded) {
      nap_for_caller();  // a caller polls now: do not take the lock back at once
    } else {
      nap = progress::first_nap;
      if (go_to_sleep) wire_.sleep(std::chrono::milliseconds(100));
    }
    between_polls_();
  }
}

}  // namespace heddle::am_detail
