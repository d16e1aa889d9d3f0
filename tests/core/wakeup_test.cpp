// SPDX-License-Identifier: Apache-2.0
// Lost wake-ups: many rounds of a burst of work and then idle time, long enough for workers to
// spin out or park, through every way work reaches a runtime (from outside, from another worker, from
// an engine's thread). Two checks can fail on a lost wake-up: the runtime's own count of them
// (runtime_stats::lost_wakeups, a timed-out sleep that found work no wake-up was sent for) must be
// zero, and the slowest submission-to-start must stay below a bound that the sleeper's safety-net
// timeout (parking_lot::safety_net_ns, 1 s) would exceed. Without the asymmetric fence
// (HEDDLE_PARKING=timed, run as its own ctest entries) missed wake-ups are expected and the timed
// sleep must find the work within the same bound.
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

#include "asymmetric_fence.hpp"  // src/core: whether this process parks with the fence
#include "heddle/core/detail/access.hpp"
#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::progress_watchdog;
using heddle_test::scaled;
using heddle_test::serial_fib;
using heddle_test::task_fib;

using clock = std::chrono::steady_clock;

// Far below the safety-net timeout (1 s) that ends the sleep of a worker whose wake-up was lost, far
// above a wake-up's cost (~30 µs; a few ms when the VM preempts the woken thread).
constexpr auto start_bound = heddle_test::sanitized ? 500ms : 250ms;

// The first start of a task in a round, after its submission at `submitted`.
struct start_clock {
  clock::time_point submitted = clock::now();
  std::atomic<clock::rep> first{0};
  void started() noexcept {
    clock::rep none = 0;
    first.compare_exchange_strong(none, clock::now().time_since_epoch().count());
  }
  clock::duration latency() const { return clock::duration(first.load()) - submitted.time_since_epoch(); }
};

// The slowest submission-to-start, with the round that had it.
struct slowest_start {
  clock::duration latency = clock::duration::zero();
  int round = -1;
  void add(const start_clock& c, int r) {
    if (c.first.load() != 0 && c.latency() > latency) {
      latency = c.latency();
      round = r;
    }
  }
};

double ms(clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void lost_wakeup_rounds(unsigned workers, int rounds) {
  // Appended rather than concatenated with operator+: GCC 12 at -O3 warns falsely on that (-Warray-bounds).
  std::string what = "lost wake-up stress, ";
  what += std::to_string(workers);
  what += " workers";
  progress_watchdog dog(what, 30s);
  heddle::runtime rt(workers);
  std::mt19937 rng(workers);
  auto max_round = clock::duration::zero();
  slowest_start slowest;
  for (int round = 0; round < rounds; ++round) {
    const auto t0 = clock::now();
    start_clock start;
    switch (round % 8) {
      case 0: {  // one task from outside, forced from outside
        auto f = rt.task([round, &start] {
          start.started();
          return round;
        });
        ASSERT_EQ(*f, round);
        break;
      }
      case 1: {  // a burst from outside
        std::vector<heddle::future<int>> fs;
        const int k = 1 + static_cast<int>(rng() % 64);
        for (int i = 0; i < k; ++i)
          fs.push_back(rt.task([i, &start] {
            start.started();
            return i;
          }));
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
        auto f = rt.task([] { return 20; }).then([&start](int v) {
          start.started();
          return v + 1;
        });
        ASSERT_EQ(*f, 21);
        break;
      }
      case 4: {  // a group from outside
        heddle::task_group g(rt);
        std::atomic<int> n{0};
        const int k = 1 + static_cast<int>(rng() % 16);
        for (int i = 0; i < k; ++i)
          g.run([&] {
            start.started();
            n++;
          });
        ASSERT_EQ(g.wait(), heddle::task_group_status::complete);
        ASSERT_EQ(n.load(), k);
        break;
      }
      case 5: {  // a successor queued by the timer engine's thread when the timer fires
        auto f = heddle::sleep_for(rt, 50us).then(heddle::strategy::normal, [round] { return round; });
        ASSERT_EQ(*f, round);
        break;
      }
      case 7: {  // the express lane, from outside
        auto* s = heddle::core_detail::make_task([round, &start] {
          start.started();
          return round * 2;
        });
        heddle::core_detail::submit_express(heddle::core_detail::access::core_of(rt), s);
        heddle::future<int> f(heddle::core_detail::adopt, s);
        ASSERT_EQ(*f, round * 2);
        break;
      }
      case 6:
        if (workers >= 2) {
          // A spawn that nobody forces: the spawner spins until another worker has stolen and
          // run it. This is the spawn that can miss a sleeper that is just registering: the
          // asymmetric fence must make one of the two see the other.
          std::atomic<bool> ran{false};
          auto f = rt.task([&ran, &start] {
            start.submitted = clock::now();
            auto child = heddle::task([&ran, &start] {
              start.started();
              ran = true;
            });
            while (!ran.load()) std::this_thread::yield();
            child.get();
            return 6;
          });
          ASSERT_EQ(*f, 6);
          break;
        }
        [[fallthrough]];
      default: {  // submitted by another outside thread, forced here
        heddle::future<int> f;
        std::thread t([&] {
          start.submitted = clock::now();
          f = rt.task([&start] {
            start.started();
            return static_cast<int>(task_fib(12));
          });
        });
        t.join();
        ASSERT_EQ(*f, serial_fib(12));
        break;
      }
    }
    max_round = std::max(max_round, clock::now() - t0);
    slowest.add(start, round);
    dog.tick();
    // Idle: mostly short gaps (workers still spinning or just parking), sometimes long ones.
    const unsigned r = rng() % 100;
    if (r < 40) continue;
    if (r < 90) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
    else std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 2000));
  }
  const heddle::runtime_stats stats = rt.stats();
  std::printf("[ info     ] %u workers, %d rounds: slowest round %.3f ms, slowest start %.3f ms (round %d), "
              "%llu parks, %llu wake-ups, %llu lost wake-ups (%s)\n",
              workers, rounds, ms(max_round), ms(slowest.latency), slowest.round,
              static_cast<unsigned long long>(stats.parks), static_cast<unsigned long long>(stats.wakeups),
              static_cast<unsigned long long>(stats.lost_wakeups),
              heddle::core_detail::asymmetric_fence_available() ? "asymmetric fence" : "timed sleeps");
  EXPECT_LT(slowest.latency, start_bound) << "round " << slowest.round << " (kind " << slowest.round % 8 << ")";
  if (heddle::core_detail::asymmetric_fence_available()) {
    EXPECT_EQ(stats.lost_wakeups, 0u);
  }
}

TEST(LostWakeups, OneWorker) { lost_wakeup_rounds(1, scaled(3000, 1500)); }
TEST(LostWakeups, TwoWorkers) { lost_wakeup_rounds(2, scaled(3000, 1500)); }
TEST(LostWakeups, FourWorkers) { lost_wakeup_rounds(4, scaled(2000, 1000)); }

// The race the asymmetric fence closes, aimed at: worker 2 finishes its task and falls asleep at
// once (no spin), while worker 1, after a delay swept across the moment of that registration,
// spawns a task that only a thief can run (worker 1 spins until it has run). Without the fence the
// spawn's sleeper check can miss the registration while the registration's look misses the spawn;
// the task then waits for the sleeper's timeout, and the runtime counts a lost wake-up.
TEST(LostWakeups, SpawnWhileAWorkerFallsAsleep) {
  progress_watchdog dog("LostWakeups.SpawnWhileAWorkerFallsAsleep", 30s);
  heddle::runtime rt(heddle::runtime_options{.threads = 2, .spin_before_park = std::chrono::nanoseconds(0)});
  const int rounds = scaled(20000, 3000);
  slowest_start slowest;
  for (int round = 0; round < rounds; ++round) {
    std::atomic<bool> ran{false};
    start_clock start;
    const unsigned delay = static_cast<unsigned>(round % 64) * 16;  // spin_work iterations
    auto other = rt.task([] { return 1; });                         // worker 2 runs this, then parks
    auto spawner = rt.task([&] {
      heddle_test::spin_work(delay);
      start.submitted = clock::now();
      auto child = heddle::task([&] {
        start.started();
        ran = true;
      });
      while (!ran.load()) std::this_thread::yield();
      child.get();
      return 2;
    });
    ASSERT_EQ(*other + *spawner, 3);
    slowest.add(start, round);
    dog.tick();
  }
  const heddle::runtime_stats stats = rt.stats();
  std::printf("[ info     ] %d rounds: slowest start %.3f ms, %llu parks, %llu lost wake-ups (%s)\n", rounds,
              ms(slowest.latency), static_cast<unsigned long long>(stats.parks),
              static_cast<unsigned long long>(stats.lost_wakeups),
              heddle::core_detail::asymmetric_fence_available() ? "asymmetric fence" : "timed sleeps");
  EXPECT_LT(slowest.latency, start_bound) << "round " << slowest.round;
  if (heddle::core_detail::asymmetric_fence_available()) {
    EXPECT_EQ(stats.lost_wakeups, 0u);
  }
}

TEST(LostWakeups, WhileAWorkerWaits) {
  // One worker waits on a slow task while bursts arrive: the wake-up must reach the worker
  // that can take the new work, not be spent on the waiting one.
  progress_watchdog dog("LostWakeups.WhileAWorkerWaits", 30s);
  heddle::runtime a(2), b(1);
  const int rounds = scaled(500, 250);
  slowest_start slowest;
  for (int round = 0; round < rounds; ++round) {
    std::atomic<bool> release{false};
    auto slow = b.task([&] {
      while (!release.load()) std::this_thread::yield();
      return 1;
    });
    auto waiter = a.task([&slow] { return *slow; });  // one of a's workers waits on b
    std::this_thread::sleep_for(std::chrono::microseconds(round % 3 == 0 ? 500 : 20));
    start_clock start;
    auto burst = a.task([&start] {
      start.started();
      return 2;
    });
    ASSERT_EQ(*burst, 2);
    slowest.add(start, round);
    release = true;
    ASSERT_EQ(*waiter, 1);
    dog.tick();
  }
  EXPECT_LT(slowest.latency, start_bound) << "round " << slowest.round;
  if (heddle::core_detail::asymmetric_fence_available()) {
    EXPECT_EQ(a.stats().lost_wakeups, 0u);
    EXPECT_EQ(b.stats().lost_wakeups, 0u);
  }
}

}  // namespace
