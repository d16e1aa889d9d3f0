// SPDX-License-Identifier: Apache-2.0
// heddle's two internal locks (heddle/core/detail/spin_wait.hpp): spin_lock, for sections of a few
// loads and stores, and parking_mutex, whose holder may block (a transport's sender waiting for its
// socket). Both are stressed for mutual exclusion with many takers; parking_mutex's takers are also
// checked to sleep, not spin, while its holder is blocked, and to all get it once it is let go.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <thread>
#include <vector>

#include "heddle/core/detail/spin_wait.hpp"
#include "test_support.hpp"

namespace {

namespace hd = heddle::core_detail;
using heddle_test::scaled;

// Threads take the lock `rounds` times each and, inside, increment a plain counter and check that
// nobody else is inside; every `block_every`-th holder (0: none) sleeps a little while holding it.
template <class Lock>
void hammer(Lock& m, unsigned threads, std::uint64_t rounds, unsigned block_every) {
  std::uint64_t counter = 0;  // guarded by m: a lost increment or a race (TSan) is a failure
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::latch start(threads);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      start.arrive_and_wait();
      for (std::uint64_t i = 0; i < rounds; ++i) {
        m.lock();
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlap = true;
        ++counter;
        if (block_every && (i + t) % block_every == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
        inside.fetch_sub(1, std::memory_order_relaxed);
        m.unlock();
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_FALSE(overlap.load()) << "two threads held the lock at once";
  EXPECT_EQ(counter, threads * rounds);
}

TEST(SpinLock, OneHolderAtATimeAmongManyTakers) {
  hd::spin_lock m;
  hammer(m, 4, scaled<std::uint64_t>(200000, 20000), 0);
}

TEST(ParkingMutex, OneHolderAtATimeAmongManyTakers) {
  hd::parking_mutex m;
  hammer(m, 4, scaled<std::uint64_t>(200000, 20000), 0);
}

// Holders that sleep while holding it send the takers to their futex: the marked word, the wake on
// unlock and the taker that keeps the mark are all exercised.
TEST(ParkingMutex, OneHolderAtATimeWhenHoldersBlock) {
  hd::parking_mutex m;
  hammer(m, 6, scaled<std::uint64_t>(2000, 500), 7);
}

TEST(ParkingMutex, TryLockFailsWhileHeldOnly) {
  hd::parking_mutex m;
  ASSERT_TRUE(m.try_lock());
  bool other = true;
  std::thread([&] { other = m.try_lock(); }).join();
  EXPECT_FALSE(other);
  m.unlock();
  std::thread([&] {
    other = m.try_lock();
    if (other) m.unlock();
  }).join();
  EXPECT_TRUE(other);
}

double thread_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// While the holder is blocked (here: asleep for 300 ms), takers spin for a few microseconds and
// then sleep: each burns a small part of the wait on its core, and each gets the lock after.
TEST(ParkingMutex, TakersSleepWhileTheHolderIsBlocked) {
  hd::parking_mutex m;
  constexpr unsigned takers = 3;
  constexpr auto hold = std::chrono::milliseconds(300);
  std::atomic<int> got{0};
  std::vector<double> cpu(takers);
  m.lock();
  std::latch ready(takers + 1);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < takers; ++t)
    ts.emplace_back([&, t] {
      ready.arrive_and_wait();
      const double before = thread_cpu_seconds();
      m.lock();
      cpu[t] = thread_cpu_seconds() - before;
      got.fetch_add(1);
      m.unlock();
    });
  ready.arrive_and_wait();
  std::this_thread::sleep_for(hold);
  EXPECT_EQ(got.load(), 0) << "a taker got the lock while it was held";
  m.unlock();
  for (auto& t : ts) t.join();
  EXPECT_EQ(got.load(), static_cast<int>(takers));
  // A taker that spun through the hold would have used its 300 ms; one that slept, a few ms at
  // most (its spin, the futex calls, its turn with the lock). A third of the hold leaves room for
  // a loaded or instrumented machine.
  for (unsigned t = 0; t < takers; ++t) EXPECT_LT(cpu[t], 0.1) << "taker " << t << " spun instead of sleeping";
}

}  // namespace
