// SPDX-License-Identifier: Apache-2.0
// The oneTBB peers' own timer: one thread that sleeps until the earliest deadline and then calls
// what was registered for it (an async_node gateway's try_put, tbb::task::resume). oneTBB has no
// timers; a program that uses async_node or resumable tasks writes one like this.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "workload.hpp"

namespace heddle::bench::blocking {

class timer_thread {
 public:
  timer_thread();
  ~timer_thread();  // fires nothing more; joins
  timer_thread(const timer_thread&) = delete;
  timer_thread& operator=(const timer_thread&) = delete;

  // Calls f() on the timer thread no earlier than `deadline`; same deadlines in call order.
  void at(clock::time_point deadline, std::function<void()> f);

 private:
  struct entry {
    clock::time_point deadline;
    std::uint64_t seq;
    std::function<void()> f;
    bool operator>(const entry& o) const { return deadline != o.deadline ? deadline > o.deadline : seq > o.seq; }
  };
  void main();

  std::mutex m_;
  std::condition_variable wake_;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace heddle::bench::blocking
