// SPDX-License-Identifier: Apache-2.0
// Starting P producers together. std::threads wait at a start line so that all of them are running
// before the clock starts (thread creation is not what is measured); the time ends when the last one
// has finished its part. Header-only helpers for the suite's files.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace heddle::bench::dispatch {

using clock = std::chrono::steady_clock;
inline double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

// body(k) on n std::threads started together; seconds from the start to the last body's return.
template <class Body>
double on_threads(unsigned n, Body body) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<clock::time_point> ends(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (unsigned k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(k);
      ends[k] = clock::now();
    });
  while (ready.load(std::memory_order_acquire) < n) std::this_thread::yield();
  const auto t0 = clock::now();
  go.store(true, std::memory_order_release);
  for (auto& t : threads) t.join();
  return seconds(*std::max_element(ends.begin(), ends.end()) - t0);
}

}  // namespace heddle::bench::dispatch
