// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the dispatch tests: a checker for mutual exclusion, a per-producer order
// check, a gate that holds items back, and a counter of live captured objects.
#pragma once

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <heddle/dispatch.hpp>

#include "async_test_support.hpp"

namespace heddle_test {

// Counts the times code between enter() and leave() ran while another thread was inside too.
class exclusion {
 public:
  class scope {
   public:
    explicit scope(exclusion& e) : e_(e) {
      if (e_.inside_.fetch_add(1, std::memory_order_acq_rel) != 0) e_.overlaps_.fetch_add(1, std::memory_order_relaxed);
    }
    ~scope() { e_.inside_.fetch_sub(1, std::memory_order_acq_rel); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

   private:
    exclusion& e_;
  };
  int overlaps() const { return overlaps_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> inside_{0};
  std::atomic<int> overlaps_{0};
};

// Sequence numbers per producer, touched only by the items of one queue (or of queues that never
// overlap): plain integers, so that under TSan an overlap or a missing happens-before between two
// items is reported as a race. Read the results after a sync() on the queue.
class order_check {
 public:
  explicit order_check(std::size_t producers) : next_(producers, 0) {}
  // Producer p's item number `seq` runs now.
  void see(std::size_t p, long seq) {
    if (seq != next_[p] && errors_.size() < 5)
      errors_.push_back("producer " + std::to_string(p) + ": item " + std::to_string(seq) + " ran when item " +
                        std::to_string(next_[p]) + " was expected");
    next_[p] = seq + 1;
    ++total_;
  }
  long next(std::size_t p) const { return next_[p]; }
  long total() const { return total_; }
  // "" when every producer's items ran in order, else the first disorders.
  std::string errors() const {
    std::string s;
    for (const auto& e : errors_) s += e + "\n";
    return s;
  }

 private:
  std::vector<long> next_;
  std::vector<std::string> errors_;
  long total_ = 0;
};

// Holds whoever waits until open() is called.
class gate {
 public:
  void open() {
    {
      std::lock_guard lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [this] { return open_; });
  }
  // Waits at most `limit`; whether it opened.
  bool wait_for(std::chrono::milliseconds limit) {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, limit, [this] { return open_; });
  }
  bool is_open() {
    std::lock_guard lock(m_);
    return open_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// An object whose copies are counted: captured by items, it tells whether they were destroyed
// (ran and freed, or discarded) by live() going back to 0.
class tracked {
 public:
  explicit tracked(std::shared_ptr<std::atomic<long>> live) : live_(std::move(live)) { live_->fetch_add(1); }
  tracked(const tracked& o) : live_(o.live_) { live_->fetch_add(1); }
  tracked(tracked&& o) noexcept : live_(o.live_) { live_->fetch_add(1); }
  tracked& operator=(const tracked&) = delete;
  ~tracked() { live_->fetch_sub(1); }

 private:
  std::shared_ptr<std::atomic<long>> live_;
};

inline std::shared_ptr<std::atomic<long>> live_counter() { return std::make_shared<std::atomic<long>>(0); }

// Threads of this process now (entries of /proc/self/task).
inline int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

// The message of the exception that f throws, or "" if it throws none (a wrong type propagates).
template <class E, class F>
std::string what_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace heddle_test
