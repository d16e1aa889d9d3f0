// SPDX-License-Identifier: Apache-2.0
// Shutdown with work pending: destroying a runtime never hangs, lets running tasks finish, and
// completes every queued task's future with its value or heddle::task_cancelled (and frees it:
// the ASan build checks for leaks).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "heddle/core/detail/access.hpp"
#include "manual_promise.hpp"
#include "test_support.hpp"

namespace shutdown_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::serial_fib;
using heddle_test::task_fib;
using heddle_test::watchdog;

// Forces f and classifies the outcome: 1 for the expected value, 0 for task_cancelled, -1 for
// anything else.
template <class T, class V>
int outcome(heddle::future<T>& f, const V& expect) {
  try {
    if constexpr (std::is_void_v<T>) {
      f.get();
      return 1;
    } else {
      return f.get() == expect ? 1 : -1;
    }
  } catch (const heddle::task_cancelled&) {
    return 0;
  } catch (...) {
    return -1;
  }
}

TEST(Shutdown, QueuedTasksAreCancelledRunningOnesFinish) {
  watchdog dog("Shutdown.QueuedTasksAreCancelledRunningOnesFinish", 60s);
  auto rt = std::make_unique<heddle::runtime>(1);
  std::atomic<bool> started{false}, release{false};
  std::atomic<int> ran{0};
  auto running = rt->task([&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
    ran++;
    return -1;
  });
  while (!started.load()) std::this_thread::yield();
  const int queued = 10000;
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < queued; ++i)
    fs.push_back(rt->task([&ran, i] {
      ran++;
      return i;
    }));
  heddle::task_group g(*rt);
  std::atomic<int> group_ran{0};
  for (int i = 0; i < 100; ++i) g.run([&group_ran] { group_ran++; });
  // Release the running task once the destructor has (almost certainly) begun: it must wait for
  // it. Should this thread be held up past the release, the worker may run some queued tasks
  // first; the checks below allow for that but not for anything lost or run twice.
  std::atomic<bool> destroying{false};
  std::thread releaser([&] {
    while (!destroying.load()) std::this_thread::yield();
    std::this_thread::sleep_for(50ms);
    release = true;
  });
  destroying = true;
  rt.reset();
  releaser.join();
  EXPECT_EQ(*running, -1);
  int values = 0, cancelled = 0, other = 0;
  for (int i = 0; i < queued; ++i) {
    EXPECT_TRUE(fs[i].is_ready());
    const int o = outcome(fs[i], i);
    values += o == 1;
    cancelled += o == 0;
    other += o < 0;
  }
  EXPECT_EQ(other, 0);
  EXPECT_EQ(values + cancelled, queued);
  EXPECT_EQ(ran.load(), 1 + values);  // a task ran if and only if its future has its value
  EXPECT_GT(cancelled, queued / 2);   // in practice all of them: the worker stops after `running`
  if (group_ran.load() < 100) EXPECT_THROW(g.wait(), heddle::task_cancelled);
  else EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
}

TEST(Shutdown, ExpressAndContinuationsAreCancelledToo) {
  watchdog dog("Shutdown.ExpressAndContinuationsAreCancelledToo", 60s);
  auto rt = std::make_unique<heddle::runtime>(1);
  std::atomic<bool> started{false}, release{false};
  auto blocker = rt->task([&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
    // Queued behind the blocker on rt itself: a continuation homed on rt and a spawned child
    // that nobody forces.
    auto src = heddle::task([] { return 1; });
    auto cont = std::move(src).then([](int v) { return v + 1; });
    (void)heddle::task([] { return 2; });
    return cont;
  });
  while (!started.load()) std::this_thread::yield();
  std::vector<heddle::future<int>> express;
  for (int i = 0; i < 100; ++i) {
    auto* s = heddle::core_detail::make_task([i] { return i; });
    heddle::core_detail::submit_express(heddle::core_detail::access::core_of(*rt), s);
    express.emplace_back(heddle::core_detail::adopt, s);
  }
  // The express tasks run before the runtime stops (the worker takes them at its next task
  // boundary) or are cancelled; the blocker finishes.
  std::thread releaser([&] {
    std::this_thread::sleep_for(20ms);
    release = true;
  });
  rt.reset();
  releaser.join();
  heddle::future<int> cont = std::move(blocker).get();
  EXPECT_GE(outcome(cont, 2), 0);
  for (int i = 0; i < 100; ++i) EXPECT_GE(outcome(express[i], i), 0) << i;
}

TEST(Shutdown, RandomShutdownsWithWorkInFlight) {
  const int rounds = scaled(20, 10);
  watchdog dog("Shutdown.RandomShutdownsWithWorkInFlight", 300s);
  std::mt19937 rng(7);
  long total_values = 0, total_cancelled = 0;
  for (int round = 0; round < rounds; ++round) {
    auto rt = std::make_unique<heddle::runtime>(2);
    std::vector<std::pair<int, heddle::future<long>>> fs;
    for (int i = 0; i < 2000; ++i) {
      const int n = 5 + static_cast<int>(rng() % 11);
      auto f = rt->task(task_fib, n);
      if (i % 4 == 3) continue;  // dropped unread: freed by the runtime, done or discarded
      fs.emplace_back(n, std::move(f));
    }
    // Continuations of tasks that may be discarded; made here, so they run on the default runtime.
    std::vector<std::pair<int, heddle::future<long>>> thens;
    for (int i = 0; i < 200; ++i) {
      const int n = static_cast<int>(rng() % 15);
      thens.emplace_back(n, rt->task(task_fib, n).then([](long v) { return v + 1; }));
    }
    heddle::task_group g(*rt);
    std::atomic<int> group_ran{0};
    for (int i = 0; i < 500; ++i)
      g.run([&group_ran] {
        heddle_test::spin_work(1000);
        group_ran++;
      });
    // Outside threads blocked on futures while the runtime goes away.
    std::vector<std::pair<int, heddle::future<long>>> waited;
    for (int i = 0; i < 4; ++i) waited.emplace_back(14, rt->task(task_fib, 14));
    std::atomic<int> waited_ok{0};
    std::vector<std::thread> waiters;
    for (auto& w : waited)
      waiters.emplace_back([&waited_ok, &w] {
        if (outcome(w.second, serial_fib(w.first)) >= 0) waited_ok++;
      });
    // And an outside thread blocked in the group's wait().
    int group_outcome = -1;  // 1 complete, 0 task_cancelled
    waiters.emplace_back([&] {
      try {
        group_outcome = g.wait() == heddle::task_group_status::complete && group_ran.load() == 500 ? 1 : -1;
      } catch (const heddle::task_cancelled&) {
        group_outcome = group_ran.load() < 500 ? 0 : -1;
      } catch (...) {
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
    rt.reset();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(waited_ok.load(), 4);
    EXPECT_GE(group_outcome, 0);
    for (auto& [n, f] : fs) {
      ASSERT_TRUE(f.is_ready());
      const int o = outcome(f, serial_fib(n));
      ASSERT_GE(o, 0) << "fib(" << n << ") neither its value nor task_cancelled";
      (o ? total_values : total_cancelled)++;
    }
    for (auto& [n, f] : thens) ASSERT_GE(outcome(f, serial_fib(n) + 1), 0);
    EXPECT_EQ(g.wait(), heddle::task_group_status::complete);  // the waiter above collected everything
  }
  std::printf("[ info     ] %ld values, %ld cancelled\n", total_values, total_cancelled);
  EXPECT_GT(total_cancelled, 0);  // the runtime really went away with work queued
  EXPECT_EQ(total_values + total_cancelled, rounds * 1500L);
}

TEST(Shutdown, SubmissionsAfterShutdownBeganAreCancelledOrRun) {
  // A running task keeps submitting to its own runtime while the runtime stops.
  watchdog dog("Shutdown.SubmissionsAfterShutdownBeganAreCancelledOrRun", 60s);
  for (int round = 0; round < scaled(20, 10); ++round) {
    auto rt = std::make_unique<heddle::runtime>(2);
    std::atomic<bool> started{false};
    auto spawner = rt->task([&started] {
      started = true;
      long ok = 0;
      for (int i = 0; i < 2000; ++i) {
        auto f = heddle::task([i] { return i; });
        try {
          ok += *f == i;
        } catch (const heddle::task_cancelled&) {
        }
      }
      return ok;
    });
    while (!started.load()) std::this_thread::yield();
    rt.reset();
    // The spawner was running, so it finished: every child either ran (and gave its own value)
    // or was cancelled, never lost, and the spawner returned normally.
    long ok = -1;
    EXPECT_NO_THROW(ok = *spawner);
    EXPECT_GE(ok, 0);
    EXPECT_LE(ok, 2000);
  }
}

// A worker that sleeps on a future or a group is woken by whoever completes it, and that can be a
// thread the worker's runtime does not own (a promise's fulfiller, a worker of another runtime).
// A waiter that is awake sees the completion as soon as it is published, may return, and its
// runtime may be destroyed while the completer is still inside the wake: the runtime must outlive
// that wake (it frees the worker the wake writes to). Each round lets the waiting worker attach
// itself and park, wakes it with other work (so that it is spinning, attached, when the completion
// comes), completes from outside and destroys the runtime at once. ThreadSanitizer reports a wake
// that is not ordered before the free, AddressSanitizer one that comes after it.
std::uint64_t parks_of(const heddle::runtime& rt) { return rt.stats().parks; }

// Waits until rt's one worker has parked since `before` (it is attached to what it waits for), then
// gives it a task and waits until that ran: the worker is back in its wait, spinning.
void park_then_nudge(heddle::runtime& rt, std::uint64_t before) {
  while (parks_of(rt) == before) std::this_thread::yield();
  std::atomic<bool> ran{false};
  auto nudge = rt.task([&] { ran.store(true, std::memory_order_release); });
  while (!ran.load(std::memory_order_acquire)) std::this_thread::yield();
}

TEST(Shutdown, WakesFromForeignThreadsRaceTheRuntimesEnd) {
  watchdog dog("Shutdown.WakesFromForeignThreadsRaceTheRuntimesEnd", 120s);
  constexpr std::uint64_t unset = ~std::uint64_t{0};
  const int rounds = scaled(400, 100);
  for (int round = 0; round < rounds; ++round) {
    heddle_test::manual_promise<int> p;
    auto f = p.get_future();
    std::atomic<std::uint64_t> parks_before{unset};
    auto rt = std::make_unique<heddle::runtime>(1);
    auto waited = rt->task([&] {
      parks_before.store(parks_of(*rt), std::memory_order_release);
      return f.get() + 1;
    });
    std::thread fulfiller([&] {
      std::uint64_t before;
      while ((before = parks_before.load(std::memory_order_acquire)) == unset) std::this_thread::yield();
      park_then_nudge(*rt, before);
      p.set_value(round);
    });
    ASSERT_EQ(*waited, round + 1);
    rt.reset();
    fulfiller.join();
  }
}

TEST(Shutdown, GroupWakesFromAnotherRuntimeRaceTheRuntimesEnd) {
  watchdog dog("Shutdown.GroupWakesFromAnotherRuntimeRaceTheRuntimesEnd", 120s);
  heddle::runtime finisher(1);
  const int rounds = scaled(400, 100);
  for (int round = 0; round < rounds; ++round) {
    auto rt = std::make_unique<heddle::runtime>(1);
    std::atomic<int> ran{0};
    auto waited = rt->task([&] {
      heddle::task_group g(finisher);  // its task runs on the other runtime, which finishes the group
      const std::uint64_t before = parks_of(*rt);
      g.run([&, before] {
        park_then_nudge(*rt, before);
        ran.fetch_add(1, std::memory_order_relaxed);
      });
      return g.wait();
    });
    ASSERT_EQ(*waited, heddle::task_group_status::complete);
    rt.reset();
    EXPECT_EQ(ran.load(), 1);
  }
}

}  // namespace

}  // namespace shutdown_test
