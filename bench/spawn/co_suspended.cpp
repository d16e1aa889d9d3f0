// SPDX-License-Identifier: Apache-2.0
#include "co_suspended.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace heddle::bench::spawn {

namespace {

// Counts itself, waits on a timer until `deadline`, then gives its number back: the frame holds the
// number, the deadline, the counter and the awaiter of the timer's future.
heddle::co_task<int> sleeps_until(std::chrono::steady_clock::time_point deadline, int i, std::atomic<int>* reached) {
  reached->fetch_add(1, std::memory_order_relaxed);
  co_await heddle::sleep_until(deadline);
  co_return i;
}

// Resident bytes (touched pages) of the process.
double resident_bytes() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  if (resident == 0) throw std::runtime_error("coroutines: /proc/self/statm unreadable: cannot measure memory");
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

suspended_figures measure_suspended(heddle::runtime& rt, int n) {
  using clock = std::chrono::steady_clock;
  suspended_figures out;
  std::atomic<int> reached{0};
  // The frames alone: made, never started (a co_task is lazy). Kept until the end, so that the
  // spawned coroutines' frames below are new memory too, not these blocks again.
  std::vector<heddle::co_task<int>> made;
  made.reserve(n);
  double before = resident_bytes();
  for (int i = 0; i < n; ++i) made.push_back(sleeps_until(clock::now() + std::chrono::hours(1), i, &reached));
  out.frame_bytes = (resident_bytes() - before) / n;
  // Spawned, each suspended on its timer until a deadline set past the time the spawns take (3 µs
  // a coroutine, some ten times what a spawn and a timer take here, and a second).
  std::vector<heddle::future<int>> fs;
  fs.reserve(n);
  const auto deadline = clock::now() + std::chrono::seconds(1) + std::chrono::nanoseconds(static_cast<long>(n) * 3000);
  before = resident_bytes();
  for (int i = 0; i < n; ++i) fs.push_back(rt.spawn(sleeps_until(deadline, i, &reached)));
  while (reached.load(std::memory_order_relaxed) != n && clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the last few reach their co_await
  out.suspended_bytes = (resident_bytes() - before) / n;
  out.beyond_frame_bytes = out.suspended_bytes - out.frame_bytes;
  if (clock::now() >= deadline)
    throw std::runtime_error("coroutines: the spawns took past the deadline: memory measured too late");
  made.clear();
  long sum = 0;
  for (auto& f : fs) sum += f.get();
  const auto end = clock::now();
  if (sum != static_cast<long>(n) * (n - 1) / 2)
    throw std::runtime_error("coroutines: the suspended coroutines gave " + std::to_string(sum) + ", expected " +
                             std::to_string(static_cast<long>(n) * (n - 1) / 2));
  out.completions_per_s = n / std::chrono::duration<double>(end - deadline).count();
  return out;
}

}  // namespace heddle::bench::spawn
