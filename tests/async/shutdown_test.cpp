// SPDX-License-Identifier: Apache-2.0
// Shutdown of the async layer: destroying a runtime with timers pending (with successors of every
// strategy attached, tokens registered, threads waiting on them) neither hangs nor leaks (the ASan
// build checks leaks), and their futures fail with heddle::task_cancelled; timers started by tasks
// that run during the shutdown; cancellation racing with the shutdown; runtimes with timers, promise
// successors and the asap pool coming and going; the default runtime stopped at exit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/core/detail/service.hpp>  // core_stopping
#include <heddle/heddle.hpp>

#include "async_test_support.hpp"
#include "heddle/core/detail/access.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using heddle::strategy;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::all_strategies;
using heddle_test::outcome;
using heddle_test::outcome_of;

// Destroys rt on another thread under a watchdog, so that a hang fails with a message.
void destroy(std::unique_ptr<heddle::runtime>& rt, const char* what) {
  watchdog dog(what, 30s);
  rt.reset();
}

TEST(Shutdown, PendingTimersFailWithTaskCancelled) {
  watchdog dog("Shutdown.PendingTimersFailWithTaskCancelled", 60s);
  auto rt = std::make_unique<heddle::runtime>(2);
  std::atomic<int> called{0};
  std::vector<heddle::future<void>> raw;
  std::vector<heddle::future<int>> successors;
  for (int i = 0; i < 20; ++i) {
    raw.push_back(heddle::sleep_for(*rt, 1h + std::chrono::seconds(i)));
    for (strategy s : all_strategies)
      successors.push_back(heddle::sleep_for(*rt, 1h).then(s, [&called] {
        called++;
        return 1;
      }));
    successors.push_back(heddle::sleep_for(*rt, 2h).then([&called] {
      called++;
      return 2;
    }));
  }
  auto both = heddle::when_all(heddle::sleep_for(*rt, 1h), heddle::sleep_for(*rt, 1ms))
                  .then(strategy::express, [&](auto) { called++; });
  // Some completed before the shutdown keep their values.
  auto done = heddle::sleep_for(*rt, 1ms).then(strategy::asap, [] { return 7; });
  EXPECT_EQ(*done, 7);
  std::this_thread::sleep_for(5ms);
  destroy(rt, "destroying a runtime with pending timers");
  for (auto& f : raw) EXPECT_EQ(outcome_of(f), outcome::stopped);
  for (std::size_t i = 0; i < successors.size(); ++i) EXPECT_EQ(outcome_of(successors[i]), outcome::stopped) << i;
  EXPECT_EQ(outcome_of(both), outcome::stopped);
  EXPECT_EQ(called.load(), 0);
  EXPECT_EQ(*done, 7);
}

// Futures dropped before the shutdown (their records are then freed by whoever completes them) and
// successors whose futures were dropped: nothing leaks, nothing runs.
TEST(Shutdown, DroppedFuturesOfPendingTimers) {
  watchdog dog("Shutdown.DroppedFuturesOfPendingTimers", 60s);
  auto rt = std::make_unique<heddle::runtime>(2);
  std::atomic<int> called{0};
  for (int i = 0; i < 200; ++i) {
    (void)heddle::sleep_for(*rt, 1h);
    (void)heddle::sleep_for(*rt, 1h).then(all_strategies[i % 4], [&called] { called++; });
  }
  destroy(rt, "destroying a runtime with dropped timers");
  EXPECT_EQ(called.load(), 0);
}

// A thread asleep on a pending timer is woken by the shutdown with task_cancelled.
TEST(Shutdown, WakesThreadsWaitingOnPendingTimers) {
  watchdog dog("Shutdown.WakesThreadsWaitingOnPendingTimers", 60s);
  auto rt = std::make_unique<heddle::runtime>(2);
  heddle::future<void> t = heddle::sleep_for(*rt, 1h);
  heddle::future<int> s = heddle::sleep_for(*rt, 1h).then(strategy::short_task, [] { return 1; });
  std::thread destroyer([&] {
    std::this_thread::sleep_for(10ms);
    rt.reset();
  });
  EXPECT_EQ(outcome_of(t), outcome::stopped);
  EXPECT_EQ(outcome_of(s), outcome::stopped);
  destroyer.join();
}

// Tokens registered by pending timers are unregistered by the shutdown: cancelling afterwards is
// harmless (ASan/TSan would see a freed hook).
TEST(Shutdown, CancellingAfterTheShutdown) {
  watchdog dog("Shutdown.CancellingAfterTheShutdown", 60s);
  heddle::cancellation_source src;
  std::vector<heddle::future<void>> fs;
  auto rt = std::make_unique<heddle::runtime>(2);
  heddle::task_group g(*rt);
  for (int i = 0; i < 50; ++i) {
    fs.push_back(heddle::sleep_for(*rt, 1h, src.token()));
    fs.push_back(heddle::sleep_for(*rt, 1h, g.token()).then(all_strategies[i % 4], [] {}));
  }
  destroy(rt, "destroying a runtime with timers registered on tokens");
  for (auto& f : fs) EXPECT_EQ(outcome_of(f), outcome::stopped);
  src.cancel();
  g.cancel();
  for (auto& f : fs) EXPECT_EQ(outcome_of(f), outcome::stopped);
}

// Stress: runtimes destroyed while their timers fire, with successors of every strategy and tasks
// that force timers. Each successor either ran exactly once (and its future has the value) or never
// (and its future fails with task_cancelled); no hang.
TEST(Shutdown, StressDestroyWhileTimersFire) {
  watchdog dog("Shutdown.StressDestroyWhileTimersFire", 180s);
  const int rounds = scaled(30, 8);
  const int n = scaled(400, 100);
  for (int round = 0; round < rounds; ++round) {
    auto rt = std::make_unique<heddle::runtime>(2);
    std::vector<std::atomic<int>> runs(n);
    std::vector<heddle::future<int>> fs;
    fs.reserve(n);
    std::uint64_t seed = 5 + round;
    for (int i = 0; i < n; ++i) {
      seed = heddle_test::mix(seed);
      fs.push_back(
          heddle::sleep_for(*rt, std::chrono::microseconds(seed % 3000)).then(all_strategies[i % 4], [&runs, i] {
            runs[i].fetch_add(1, std::memory_order_relaxed);
            return i;
          }));
    }
    // Tasks that sleep on timers while the runtime goes away.
    std::vector<heddle::future<int>> sleepers;
    for (int k = 0; k < 4; ++k)
      sleepers.push_back(rt->task([k] {
        int slept = 0;
        for (int j = 0; j < 5; ++j) {
          try {
            heddle::sleep_for(std::chrono::microseconds(300 * (k + 1))).get();
            slept++;
          } catch (const heddle::task_cancelled&) {
            return -1;
          }
        }
        return slept;
      }));
    std::this_thread::sleep_for(std::chrono::microseconds(seed % 3000));
    destroy(rt, "destroying a runtime while its timers fire");
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      const outcome o = outcome_of(fs[i]);
      const int r = runs[i].load();
      if (!((o == outcome::value && r == 1 && *fs[i] == i) || (o == outcome::stopped && r == 0)) && wrong++ < 5)
        ADD_FAILURE() << "round " << round << ", timer " << i << " (" << to_string(all_strategies[i % 4])
                      << "): " << name(o) << ", successor ran " << r << " times";
    }
    EXPECT_EQ(wrong, 0);
    for (auto& s : sleepers) {
      const outcome o = outcome_of(s);
      EXPECT_TRUE(o == outcome::value || o == outcome::stopped) << name(o);
      if (o == outcome::value) {
        EXPECT_TRUE(*s == 5 || *s == -1);
      }
    }
  }
}

// Stress: a thread cancels the timers' sources while the runtime is being destroyed. Each timer
// fails with operation_cancelled or task_cancelled, exactly once, and nothing hangs.
TEST(Shutdown, StressCancelRacingWithTheShutdown) {
  watchdog dog("Shutdown.StressCancelRacingWithTheShutdown", 180s);
  const int rounds = scaled(40, 10);
  for (int round = 0; round < rounds; ++round) {
    auto rt = std::make_unique<heddle::runtime>(2);
    heddle::cancellation_source a, b;
    std::vector<heddle::future<void>> fs;
    for (int i = 0; i < 200; ++i)
      fs.push_back(heddle::sleep_for(*rt, 1h, (i % 2 ? a : b).token()).then(all_strategies[i % 4], [] {}));
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 20)));
      a.cancel();
      b.cancel();
    });
    std::this_thread::sleep_for(std::chrono::microseconds(50 * ((round * 7) % 20)));
    destroy(rt, "destroying a runtime while its timers are cancelled");
    canceller.join();
    int wrong = 0;
    for (auto& f : fs) {
      const outcome o = outcome_of(f);
      if (o != outcome::cancelled && o != outcome::stopped && wrong++ < 5) ADD_FAILURE() << name(o);
    }
    EXPECT_EQ(wrong, 0);
  }
}

// Tasks still running when the destructor starts may start timers and wait for them: with the timer
// engine already running, or with its first use during the shutdown. They get a value or
// task_cancelled, never a hang.
TEST(Shutdown, TimersStartedByTasksDuringTheShutdown) {
  watchdog dog("Shutdown.TimersStartedByTasksDuringTheShutdown", 60s);
  for (bool engine_running : {true, false}) {
    auto rt = std::make_unique<heddle::runtime>(2);
    if (engine_running) heddle::sleep_for(*rt, 0ms).get();
    heddle::core_detail::runtime_core* core = heddle::core_detail::access::core_of(*rt);
    std::atomic<int> started{0};
    std::vector<heddle::future<int>> fs;
    for (int k = 0; k < 2; ++k)
      fs.push_back(rt->task([core, &started, k] {
        started++;
        while (!heddle::core_detail::core_stopping(core)) std::this_thread::yield();
        int outcomes = 0;
        for (strategy s : all_strategies) {
          heddle::future<int> f;
          try {
            f = heddle::sleep_for(std::chrono::microseconds(500 * (k + 1))).then(s, [] { return 1; });
          } catch (const heddle::task_cancelled&) {
            outcomes += 100;  // refused at the start
            continue;
          }
          const outcome o = outcome_of(f);
          if (o == outcome::value || o == outcome::stopped) outcomes += 1;
          else return -1000;
        }
        return outcomes;
      }));
    while (started.load() < 2) std::this_thread::yield();
    destroy(rt, "destroying a runtime whose running tasks start timers");
    for (auto& f : fs) {
      const outcome o = outcome_of(f);
      // The tasks were running: they finish (the destructor waits for them).
      ASSERT_EQ(o, outcome::value) << name(o);
      EXPECT_GE(*f, 4) << "a timer started during the shutdown failed with something else";
    }
  }
}

// Promise successors queued (or running on the pool) when the runtime stops: each ran once with its
// value, or never and failed with task_cancelled.
TEST(Shutdown, PromiseSuccessorsQueuedAtShutdown) {
  watchdog dog("Shutdown.PromiseSuccessorsQueuedAtShutdown", 60s);
  for (int round = 0; round < scaled(10, 4); ++round) {
    auto rt = std::make_unique<heddle::runtime>(1);
    const int n = 40;
    // A promise's future has no runtime; a when_all with one of rt's (ready) futures gives the
    // successor rt as its home without calling then() on the worker, which will be held.
    std::vector<heddle::future<int>> homes;
    for (int i = 0; i < n; ++i) homes.push_back(rt->task([] { return 0; }));
    for (auto& h : homes) h.wait();
    std::atomic<bool> started{false}, release{false};
    auto blocker = rt->task([&] {
      started = true;
      while (!release.load()) std::this_thread::yield();
    });
    while (!started.load()) std::this_thread::yield();
    std::vector<heddle::promise<int>> ps(n);
    std::vector<heddle::future<int>> fs(n);
    std::vector<std::atomic<int>> runs(n);
    for (int i = 0; i < n; ++i)
      fs[i] = heddle::when_all(std::move(homes[i]), ps[i].get_future())
                  .then(all_strategies[i % 4], [&runs, i](std::tuple<int, int> v) {
                    runs[i]++;
                    return std::get<1>(v);
                  });
    for (int i = 0; i < n; ++i) ps[i].set_value(i);
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2 + round % 3));
      release = true;
    });
    destroy(rt, "destroying a runtime with promise successors queued");
    releaser.join();
    EXPECT_EQ(outcome_of(blocker), outcome::value);
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      const outcome o = outcome_of(fs[i]);
      if (!((o == outcome::value && runs[i].load() == 1 && *fs[i] == i) ||
            (o == outcome::stopped && runs[i].load() == 0)))
        wrong++;
    }
    EXPECT_EQ(wrong, 0);
  }
}

// Many short-lived runtimes, each with its timer engine, asap pool and pending work: all torn down
// without leaks (ASan) or hangs.
TEST(Shutdown, ManyRuntimesWithTimersComeAndGo) {
  watchdog dog("Shutdown.ManyRuntimesWithTimersComeAndGo", 120s);
  const int rounds = scaled(40, 10);
  std::atomic<int> ran{0};
  for (int round = 0; round < rounds; ++round) {
    auto rt = std::make_unique<heddle::runtime>(1 + round % 2);
    std::vector<heddle::future<void>> fs;
    for (int i = 0; i < 30; ++i) {
      fs.push_back(heddle::sleep_for(*rt, std::chrono::microseconds(i * 20)).then(all_strategies[i % 4], [&ran] {
        ran++;
      }));
      fs.push_back(heddle::sleep_for(*rt, 1h).then(all_strategies[i % 4], [&ran] { ran++; }));
    }
    if (round % 3 == 0) fs.front().get();
    if (round % 2) std::this_thread::sleep_for(1ms);
    destroy(rt, "destroying one of many runtimes");
    for (auto& f : fs) {
      const outcome o = outcome_of(f);
      EXPECT_TRUE(o == outcome::value || o == outcome::stopped) << name(o);
    }
  }
  // A runtime destroyed right after its engine started (the service thread may not have run yet).
  for (int round = 0; round < rounds; ++round) {
    auto rt = std::make_unique<heddle::runtime>(1);
    auto t = heddle::sleep_for(*rt, std::chrono::microseconds(round % 3));
    rt.reset();
    const outcome o = outcome_of(t);
    EXPECT_TRUE(o == outcome::value || o == outcome::stopped) << name(o);
  }
}

// The default runtime, with timers pending, is stopped at exit: the process exits cleanly (and, under
// ASan, without leaks). Run in a child process with an alarm against a hang.
TEST(ShutdownDeathTest, DefaultRuntimeWithPendingTimersAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(heddle_test::sanitized ? 120 : 30);
        // Kept alive until the static destructors run, after (or before) the default runtime stops.
        static heddle::cancellation_source src;
        static std::vector<heddle::future<void>> kept;
        for (int i = 0; i < 20; ++i) {
          kept.push_back(heddle::sleep_for(1h));
          kept.push_back(heddle::sleep_for(1h, src.token()).then(all_strategies[i % 4], [] { std::abort(); }));
          (void)heddle::sleep_for(1h).then(all_strategies[i % 4], [] { std::abort(); });
        }
        heddle::sleep_for(1ms).get();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
