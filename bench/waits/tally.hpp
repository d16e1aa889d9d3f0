// SPDX-License-Identifier: Apache-2.0
// What the successors of one run record: when each started, how often it ran, whether what it
// received was right, and when the last one ended. Allocated and touched before the "before"
// snapshot, so that its own pages are not counted as the waits' memory.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "probes.hpp"

namespace heddle::bench::waits {

inline std::int64_t now_ns() { return clock::now().time_since_epoch().count(); }

class tally {
 public:
  explicit tally(std::size_t n) : n_(n), start_ns_(n, 0), hits_(new std::atomic<std::uint32_t>[n]) {
    for (std::size_t i = 0; i < n; ++i) hits_[i].store(0, std::memory_order_relaxed);
  }

  // Successor i ran (call at its start); `good`: what it received was what was sent.
  void hit(std::size_t i, bool good = true) {
    start_ns_[i] = now_ns();
    hits_[i].fetch_add(1, std::memory_order_relaxed);
    if (!good) {
      std::size_t none = n_;
      first_bad_.compare_exchange_strong(none, i);
      bad_.fetch_add(1, std::memory_order_relaxed);
    }
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      const std::int64_t end = now_ns();
      std::lock_guard lock(m_);
      end_ns_ = end;
      all_ = true;
      cv_.notify_all();
    }
  }

  // Waits until n successors have run; false after timeout_s.
  bool wait(double timeout_s) {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [this] { return all_; });
  }
  std::int64_t end_ns() {
    std::lock_guard lock(m_);
    return end_ns_;
  }
  std::size_t done() const { return done_.load(std::memory_order_acquire); }
  const std::vector<std::int64_t>& start_ns() const { return start_ns_; }

  // "" if every successor ran exactly once with the right input and, when deadline_ns is given, none
  // started before it; else what went wrong, with the first index that shows it.
  std::string check(std::int64_t deadline_ns = 0) const {
    std::size_t never = 0, twice = 0, early = 0, first_never = n_, first_twice = n_, first_early = n_;
    for (std::size_t i = 0; i < n_; ++i) {
      const std::uint32_t h = hits_[i].load(std::memory_order_relaxed);
      if (h == 0 && never++ == 0) first_never = i;
      if (h > 1 && twice++ == 0) first_twice = i;
      if (h > 0 && deadline_ns && start_ns_[i] < deadline_ns && early++ == 0) first_early = i;
    }
    std::string e;
    auto add = [&](std::size_t count, const char* what, std::size_t first) {
      if (count)
        e += (e.empty() ? "" : "; ") + std::to_string(count) + " of " + std::to_string(n_) + " " + what +
             " (the first: #" + std::to_string(first) + ")";
    };
    add(never, "successors never ran", first_never);
    add(twice, "successors ran more than once", first_twice);
    add(early, "successors started before their deadline", first_early);
    add(bad_.load(), "successors received the wrong result", first_bad_.load());
    if (!e.empty() && early)
      e += "; earliest by " + std::to_string(double(deadline_ns - start_ns_[first_early]) * 1e-3) + " µs (the first)";
    return e;
  }

 private:
  std::size_t n_;
  std::vector<std::int64_t> start_ns_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> hits_;
  std::atomic<std::size_t> done_{0};
  std::atomic<std::size_t> bad_{0};
  std::atomic<std::size_t> first_bad_{n_};
  std::mutex m_;
  std::condition_variable cv_;
  bool all_ = false;
  std::int64_t end_ns_ = 0;
};

}  // namespace heddle::bench::waits
