// SPDX-License-Identifier: Apache-2.0
#include "timer_thread.hpp"

namespace heddle::bench::blocking {

timer_thread::timer_thread() : thread_([this] { main(); }) {}

timer_thread::~timer_thread() {
  {
    std::lock_guard lock(m_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void timer_thread::at(clock::time_point deadline, std::function<void()> f) {
  bool earliest;
  {
    std::lock_guard lock(m_);
    earliest = heap_.empty() || deadline < heap_.top().deadline;
    heap_.push({deadline, seq_++, std::move(f)});
  }
  if (earliest) wake_.notify_one();
}

void timer_thread::main() {
  std::unique_lock lock(m_);
  for (;;) {
    if (stopping_) return;
    if (heap_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto deadline = heap_.top().deadline;
    // libstdc++ waits on CLOCK_MONOTONIC for steady_clock (pthread_cond_clockwait); a wake-up may
    // still come early or spuriously, so the deadline is checked again against the clock.
    if (clock::now() < deadline) {
      wake_.wait_until(lock, deadline);
      continue;
    }
    auto f = std::move(const_cast<entry&>(heap_.top()).f);
    heap_.pop();
    lock.unlock();
    f();
    lock.lock();
  }
}

}  // namespace heddle::bench::blocking
