// Lost wake-ups: many rounds of a burst of work and then idle time, long enough for workers to
// spin out or park, through every way work reaches a runtime. A lost wake-up hangs a round; the
// progress watchdog turns that into a failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::progress_watchdog;
using heddle_test::scaled;
using heddle_test::serial_fib;
using heddle_test::task_fib;

void lost_wakeup_rounds(unsigned workers, int rounds) {
  progress_watchdog dog("lost wake-up stress, " + std::to_string(workers) + " workers", 30s);
  heddle::runtime rt(workers);
  std::mt19937 rng(workers);
  auto max_round = std::chrono::nanoseconds::zero();
  for (int round = 0; round < rounds; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    switch (round % 8) {
      case 0: {  // one task from outside, forced from outside
        auto f = rt.task([round] { return round; });
        ASSERT_EQ(*f, round);
        break;
      }
      case 1: {  // a burst from outside
        std::vector<heddle::future<int>> fs;
        const int k = 1 + static_cast<int>(rng() % 64);
        for (int i = 0; i < k; ++i) fs.push_back(rt.task([i] { return i; }));
        int sum = 0;
        for (auto& f : fs) sum += *f;
        ASSERT_EQ(sum, k * (k - 1) / 2);
        break;
      }
      case 2: {  // spawns from inside a task (the worker-local path), some left for thieves
        auto f = rt.task([] {
          std::vector<heddle::future<int>> fs;
          for (int i = 0; i < 8; ++i)
            fs.push_back(heddle::task([i] {
              heddle_test::spin_work(500);
              return i;
            }));
          int sum = 0;
          for (auto& c : fs) sum += *c;
          return sum;
        });
        ASSERT_EQ(*f, 28);
        break;
      }
      case 3: {  // a continuation started by a completion on a worker
        auto f = rt.task([] { return 20; }).then([](int v) { return v + 1; });
        ASSERT_EQ(*f, 21);
        break;
      }
      case 4: {  // a group from outside
        heddle::task_group g(rt);
        std::atomic<int> n{0};
        const int k = 1 + static_cast<int>(rng() % 16);
        for (int i = 0; i < k; ++i) g.run([&] { n++; });
        ASSERT_EQ(g.wait(), heddle::task_group_status::complete);
        ASSERT_EQ(n.load(), k);
        break;
      }
      case 7: {  // the express lane, from outside
        auto* s = heddle::detail::make_task([round] { return round * 2; });
        heddle::detail::submit_express(rt.core(), s);
        heddle::future<int> f(heddle::detail::adopt, s);
        ASSERT_EQ(*f, round * 2);
        break;
      }
      case 6:
        if (workers >= 2) {
          // A spawn that nobody forces: the spawner spins until another worker has stolen and
          // run it. A worker's spawn may miss a sleeper that is just registering; the sleeper's
          // timed sleep must then still find the work.
          std::atomic<bool> ran{false};
          auto f = rt.task([&ran] {
            auto child = heddle::task([&ran] { ran = true; });
            while (!ran.load()) std::this_thread::yield();
            child.get();
            return 6;
          });
          ASSERT_EQ(*f, 6);
          break;
        }
        [[fallthrough]];
      default: {  // submitted by another outside thread, forced here
        heddle::future<long> f;
        std::thread t([&] { f = rt.task(task_fib, 12); });
        t.join();
        ASSERT_EQ(*f, serial_fib(12));
        break;
      }
    }
    max_round = std::max(max_round, std::chrono::steady_clock::now() - t0);
    dog.tick();
    // Idle: mostly short gaps (workers still spinning or just parking), sometimes long ones.
    const unsigned r = rng() % 100;
    if (r < 40) continue;
    if (r < 90)
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
    else
      std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 2000));
  }
  std::printf("[ info     ] %u workers, %d rounds: slowest round %.3f ms\n", workers, rounds,
              std::chrono::duration<double, std::milli>(max_round).count());
}

TEST(LostWakeups, OneWorker) { lost_wakeup_rounds(1, scaled(3000, 1500)); }
TEST(LostWakeups, TwoWorkers) { lost_wakeup_rounds(2, scaled(3000, 1500)); }
TEST(LostWakeups, FourWorkers) { lost_wakeup_rounds(4, scaled(2000, 1000)); }

TEST(LostWakeups, WhileAWorkerWaits) {
  // One worker waits on a slow task while bursts arrive: the wake-up must reach the worker
  // that can take the new work, not be spent on the waiting one.
  progress_watchdog dog("LostWakeups.WhileAWorkerWaits", 30s);
  heddle::runtime a(2), b(1);
  const int rounds = scaled(500, 250);
  for (int round = 0; round < rounds; ++round) {
    std::atomic<bool> release{false};
    auto slow = b.task([&] {
      while (!release.load()) std::this_thread::yield();
      return 1;
    });
    auto waiter = a.task([&slow] { return *slow; });  // one of a's workers waits on b
    std::this_thread::sleep_for(std::chrono::microseconds(round % 3 == 0 ? 500 : 20));
    auto burst = a.task([] { return 2; });
    ASSERT_EQ(*burst, 2);
    release = true;
    ASSERT_EQ(*waiter, 1);
    dog.tick();
  }
}

}  // namespace
