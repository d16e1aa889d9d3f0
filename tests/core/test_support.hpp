// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the core tests: sanitizer-aware sizes, a watchdog that turns a hang into a
// failure with a message instead of a test that blocks forever, and a counter of live frames.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <heddle/core/detail/sanitizers.hpp>
#include <heddle/heddle.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace heddle_test {

// Counts the objects alive: made in a coroutine's body, it counts live frames (destroyed with its
// frame, finished or not).
struct alive_counter {
  std::atomic<long>* n;
  explicit alive_counter(std::atomic<long>* c) : n(c) { n->fetch_add(1); }
  ~alive_counter() { n->fetch_sub(1); }
  alive_counter(const alive_counter&) = delete;
  alive_counter& operator=(const alive_counter&) = delete;
};

// HEDDLE_TEST_SANITIZED comes from tests/CMakeLists.txt; the macros cover other builds.
#if defined(HEDDLE_TEST_SANITIZED) || HEDDLE_DETAIL_TSAN || HEDDLE_DETAIL_ASAN
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif

#if HEDDLE_DETAIL_TSAN
inline constexpr bool thread_sanitizer = true;
#else
inline constexpr bool thread_sanitizer = false;
#endif

// The full size in a plain build, the smaller one under a sanitizer (which runs 5-20x slower).
template <class T>
constexpr T scaled(T full, T sanitizer_size) {
  return sanitized ? sanitizer_size : full;
}

// Aborts the process with a message if it is still alive `limit` after construction; the
// destructor disarms it. Limits are generous (many times the expected run time), so a slow
// machine never trips one; only a real hang does.
class watchdog {
 public:
  watchdog(std::string what, std::chrono::seconds limit) : what_(std::move(what)) {
    if (sanitized) limit *= 4;
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(m_);
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
        std::fprintf(stderr, "\nWATCHDOG: '%s' did not finish within %lld s: hang, aborting\n", what_.c_str(),
                     static_cast<long long>(limit.count()));
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  ~watchdog() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  std::string what_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// Aborts the process with a message when tick() has not been called for `limit`: for long
// stress loops, where a total time limit would have to be very loose to be safe.
class progress_watchdog {
 public:
  progress_watchdog(std::string what, std::chrono::seconds limit) : what_(std::move(what)) {
    if (sanitized) limit *= 4;
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(m_);
      std::uint64_t last = ticks_;
      while (!done_) {
        if (!cv_.wait_for(lock, limit, [&] { return done_ || ticks_ != last; })) {
          std::fprintf(stderr, "\nWATCHDOG: '%s' made no progress for %lld s (at step %llu): hang, aborting\n",
                       what_.c_str(), static_cast<long long>(limit.count()), static_cast<unsigned long long>(ticks_));
          std::fflush(stderr);
          std::abort();
        }
        last = ticks_;
      }
    });
  }
  void tick() {
    {
      std::lock_guard lock(m_);
      ++ticks_;
    }
    cv_.notify_all();
  }
  ~progress_watchdog() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  progress_watchdog(const progress_watchdog&) = delete;
  progress_watchdog& operator=(const progress_watchdog&) = delete;

 private:
  std::string what_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::uint64_t ticks_ = 0;
  std::thread thread_;
};

// Busy work the optimizer cannot remove, for tasks that must take a little time.
inline unsigned spin_work(unsigned iterations) {
  volatile unsigned x = 0;
  for (unsigned i = 0; i < iterations; ++i) x = x + i;
  return x;
}

// Serial Fibonacci, the reference for the task versions.
constexpr long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

// A task per call, forced with *.
inline long task_fib(int n) {
  if (n < 2) return n;
  auto a = heddle::task(task_fib, n - 1);
  auto b = heddle::task(task_fib, n - 2);
  return *a + *b;
}

// splitmix64: deterministic pseudo-random numbers from a seed, for trees and schedules.
constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace heddle_test
