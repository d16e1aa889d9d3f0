// SPDX-License-Identifier: Apache-2.0
#include "receiver.hpp"

#include <algorithm>

#include "heddle/core/detail/spin_wait.hpp"

namespace heddle::am_detail {

receiver::receiver(transport& wire, progress& lock, std::chrono::nanoseconds spin, std::function<void()> between_polls)
    : wire_(wire), progress_(lock), spin_(spin), between_polls_(std::move(between_polls)) {}

receiver::~receiver() { stop(); }

void receiver::start() {
  thread_ = std::thread([this] { loop(); });
}

void receiver::stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  wire_.interrupt();
  progress_.wake_receiver();
  thread_.join();
}

void receiver::loop() {
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
    auto idle_since = clock::now();
    bool go_to_sleep = false;
    for (unsigned n = 1;; ++n) {
      if (stop_.load(std::memory_order_relaxed) || progress_.yield_wanted()) break;
      if (wire_.poll()) {
        n = 0;
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
    const bool yielded = progress_.yield_wanted();
    polling_thread = false;
    progress_.unlock();
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
