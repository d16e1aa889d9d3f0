// SPDX-License-Identifier: Apache-2.0
// Timers (heddle/async/timer.hpp): never early (steady_clock), deadline order with start order for
// equal deadlines (also with timers started from several threads), a later, earlier timer wakes the
// engine, timers forced from workers and from other threads, sleep_for without a runtime, successors
// that start timers from the service thread, a throwing successor that leaves the engine alive, and
// stress with many timers from several threads and workers, checked per timer.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "async_test_support.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using heddle::strategy;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::all_strategies;
using heddle_test::eventually;
using heddle_test::on_worker_of;

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Polls p until it holds or `limit` passes; for upper bounds that must be generous.
TEST(Timer, SleepForNeverCompletesEarly) {
  watchdog dog("Timer.SleepForNeverCompletesEarly", 60s);
  heddle::runtime rt(2);
  for (auto d : {0ms, 1ms, 5ms, 20ms}) {
    const auto t0 = clock_type::now();
    heddle::future<void> t = heddle::sleep_for(rt, d);
    t.get();
    EXPECT_GE(clock_type::now() - t0, d);
  }
  // Sub-millisecond and odd durations (rounded up to nanoseconds, never down).
  for (auto d : {std::chrono::microseconds(1), std::chrono::microseconds(250), std::chrono::microseconds(1999)}) {
    const auto t0 = clock_type::now();
    heddle::sleep_for(rt, d).get();
    EXPECT_GE(clock_type::now() - t0, d);
  }
  const auto t0 = clock_type::now();
  heddle::sleep_for(rt, std::chrono::duration<double, std::milli>(3.5)).get();
  EXPECT_GE(clock_type::now() - t0, std::chrono::microseconds(3500));
}

TEST(Timer, NotReadyBeforeItsDeadline) {
  watchdog dog("Timer.NotReadyBeforeItsDeadline", 60s);
  heddle::runtime rt(2);
  const auto deadline = clock_type::now() + 30ms;
  heddle::future<void> t = heddle::sleep_until(rt, deadline);
  ASSERT_TRUE(t.valid());
  // Whenever we look before the deadline, it is not ready.
  for (;;) {
    const bool ready = t.is_ready();
    const auto now = clock_type::now();
    if (now >= deadline) break;
    EXPECT_FALSE(ready) << "ready " << (deadline - now).count() << " ns before its deadline";
    std::this_thread::sleep_for(1ms);
  }
  t.get();
  EXPECT_GE(clock_type::now(), deadline);
}

TEST(Timer, PastAndPresentDeadlinesComplete) {
  watchdog dog("Timer.PastAndPresentDeadlinesComplete", 60s);
  heddle::runtime rt(2);
  heddle::sleep_until(rt, clock_type::now() - 1h).get();
  heddle::sleep_until(rt, clock_type::time_point{}).get();
  heddle::sleep_until(rt, clock_type::now()).get();
  heddle::sleep_for(rt, 0s).get();
  heddle::sleep_for(rt, -5ms).get();
  // And their successors run, with every strategy.
  std::atomic<int> ran{0};
  std::vector<heddle::future<void>> fs;
  for (strategy s : all_strategies)
    fs.push_back(heddle::sleep_until(rt, clock_type::now() - 1s).then(s, [&] { ran++; }));
  for (auto& f : fs) f.get();
  EXPECT_EQ(ran.load(), 4);
}

// Every successor of a timer, whatever its strategy, starts at or after the deadline.
TEST(Timer, SuccessorsOfEveryStrategyStartAfterTheDeadline) {
  watchdog dog("Timer.SuccessorsOfEveryStrategyStartAfterTheDeadline", 60s);
  heddle::runtime rt(2);
  const int n = scaled(400, 80);
  std::vector<clock_type::time_point> deadlines(n), seen(n);
  std::vector<heddle::future<void>> fs;
  std::uint64_t seed = 7;
  const auto base = clock_type::now();
  for (int i = 0; i < n; ++i) {
    seed = heddle_test::mix(seed);
    deadlines[i] = base + std::chrono::microseconds(seed % 30'000);
    fs.push_back(heddle::sleep_until(rt, deadlines[i]).then(all_strategies[i % 4], [&seen, i] {
      seen[i] = clock_type::now();
    }));
  }
  for (auto& f : fs) f.get();
  for (int i = 0; i < n; ++i)
    EXPECT_GE(seen[i], deadlines[i]) << "timer " << i << " (" << to_string(all_strategies[i % 4]) << ") early by "
                                     << (deadlines[i] - seen[i]).count() << " ns";
}

// Distinct and equal deadlines, started in index order from one thread: the short_task successors run
// on the service thread in completion order, which must be by (deadline, start order).
TEST(Timer, CompleteInDeadlineOrderThenStartOrder) {
  watchdog dog("Timer.CompleteInDeadlineOrderThenStartOrder", 60s);
  heddle::runtime rt(2);
  const int n = scaled(3000, 400);
  const int distinct = 40;
  std::vector<int> slot(n);
  std::uint64_t seed = 42;
  for (int i = 0; i < n; ++i) {
    seed = heddle_test::mix(seed);
    slot[i] = static_cast<int>(seed % distinct);
  }
  // Start the engine first, so that its start-up does not eat into the margin below. Should the
  // starts overrun it anyway, count_misordered judges the pairs whose order is still defined.
  heddle::sleep_for(rt, 0ms).get();

  const auto base = clock_type::now() + (heddle_test::sanitized ? 400ms : 150ms);
  auto deadline_of = [&](int i) { return base + slot[i] * 200us; };
  std::mutex m;
  std::vector<int> order;
  order.reserve(n);
  std::vector<clock_type::time_point> seen(n), started_by(n);
  std::vector<heddle::future<void>> fs;
  fs.reserve(n);
  for (int i = 0; i < n; ++i) {
    fs.push_back(heddle::sleep_until(rt, deadline_of(i)).then(strategy::short_task, [&, i] {
      seen[i] = clock_type::now();
      std::lock_guard lock(m);
      order.push_back(i);
    }));
    started_by[i] = clock_type::now();
  }
  for (auto& f : fs) f.get();

  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expect(n);
  std::iota(expect.begin(), expect.end(), 0);
  ASSERT_EQ(sorted, expect) << "some timer completed twice or never";
  std::uint64_t judged = 0;
  EXPECT_EQ(heddle_test::count_misordered(
                order, [&](int b, int a) { return std::pair(slot[b], b) < std::pair(slot[a], a); },
                [&](int i) { return started_by[i]; }, deadline_of, judged),
            0);
  std::printf("[ info     ] %llu of %llu pairs judged\n", static_cast<unsigned long long>(judged),
              static_cast<unsigned long long>(n) * (n - 1) / 2);
  for (int i = 0; i < n; ++i) EXPECT_GE(seen[i], deadline_of(i)) << "timer " << i;
}

// All timers with one deadline: exactly the start order, however long the starts take (a timer
// started after the deadline is behind every earlier one in the heap, or they have completed).
TEST(Timer, EqualDeadlinesCompleteInStartOrder) {
  watchdog dog("Timer.EqualDeadlinesCompleteInStartOrder", 60s);
  heddle::runtime rt(1);
  heddle::sleep_for(rt, 0ms).get();
  const int n = scaled(2000, 300);
  const auto deadline = clock_type::now() + (heddle_test::sanitized ? 300ms : 100ms);
  std::vector<int> order;
  std::mutex m;
  std::vector<heddle::future<void>> fs;
  for (int i = 0; i < n; ++i)
    fs.push_back(heddle::sleep_until(rt, deadline).then(strategy::short_task, [&, i] {
      std::lock_guard lock(m);
      order.push_back(i);
    }));
  for (auto& f : fs) f.get();
  std::vector<int> expect(n);
  std::iota(expect.begin(), expect.end(), 0);
  EXPECT_EQ(order, expect);
}

// Several threads start timers at once: completion order is by deadline, and by start order among a
// thread's own timers with one deadline (the order of two threads' starts is not known here).
TEST(Timer, DeadlineOrderWithTimersFromSeveralThreads) {
  watchdog dog("Timer.DeadlineOrderWithTimersFromSeveralThreads", 60s);
  heddle::runtime rt(2);
  heddle::sleep_for(rt, 0ms).get();
  const int threads = 4;
  const int per_thread = scaled(800, 100);
  const int n = threads * per_thread;
  const int distinct = 30;
  const auto base = clock_type::now() + (heddle_test::sanitized ? 500ms : 200ms);
  // Timer g = t * per_thread + i is thread t's i-th.
  std::vector<int> slot(n);
  std::vector<clock_type::time_point> started_by(n);
  auto deadline_of = [&](int g) { return base + slot[g] * 300us; };
  std::mutex m;
  std::vector<int> order;
  std::vector<std::vector<heddle::future<void>>> fs(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t seed = 1000 + t;
      for (int i = 0; i < per_thread; ++i) {
        seed = heddle_test::mix(seed);
        const int g = t * per_thread + i;
        slot[g] = static_cast<int>(seed % distinct);
        fs[t].push_back(heddle::sleep_until(rt, deadline_of(g)).then(strategy::short_task, [&, g] {
          std::lock_guard lock(m);
          order.push_back(g);
        }));
        started_by[g] = clock_type::now();
      }
    });
  for (auto& th : ts) th.join();
  for (auto& v : fs)
    for (auto& f : v) f.get();
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  auto precedes = [&](int b, int a) {
    if (slot[b] != slot[a]) return slot[b] < slot[a];
    return b / per_thread == a / per_thread && b < a;  // one thread's timers: in start order
  };
  std::uint64_t judged = 0;
  EXPECT_EQ(heddle_test::count_misordered(
                order, precedes, [&](int g) { return started_by[g]; }, deadline_of, judged),
            0);
  std::printf("[ info     ] %llu of %llu pairs judged\n", static_cast<unsigned long long>(judged),
              static_cast<unsigned long long>(n) * (n - 1) / 2);
}

// The engine sleeps until the earliest deadline; a timer started later with an earlier deadline must
// wake it, not wait behind the long one.
TEST(Timer, AnEarlierTimerStartedLaterIsNotHeldBack) {
  watchdog dog("Timer.AnEarlierTimerStartedLaterIsNotHeldBack", 60s);
  heddle::runtime rt(2);
  heddle::future<void> long_one = heddle::sleep_for(rt, 1h);
  std::this_thread::sleep_for(5ms);  // let the engine go to sleep on the long deadline
  heddle::future<void> short_one = heddle::sleep_for(rt, 10ms);
  EXPECT_TRUE(eventually([&] { return short_one.is_ready(); }, 20s)) << "a 10 ms timer waited behind a 1 h one";
  EXPECT_NO_THROW(short_one.get());
  EXPECT_FALSE(long_one.is_ready());
  // A chain of ever earlier deadlines, each started while the engine waits for the previous one.
  std::vector<heddle::future<void>> fs;
  for (int i = 10; i > 0; --i) fs.push_back(heddle::sleep_for(rt, std::chrono::seconds(i * 60)));
  heddle::future<void> last = heddle::sleep_for(rt, 2ms);
  EXPECT_TRUE(eventually([&] { return last.is_ready(); }, 20s));
  for (auto& f : fs) EXPECT_FALSE(f.is_ready());
}

// The farthest deadline steady_clock can express waits (without overflowing the engine's sleep),
// does not hold back nearer timers, and is cancellable.
TEST(Timer, TheFarthestDeadline) {
  watchdog dog("Timer.TheFarthestDeadline", 60s);
  heddle::runtime rt(2);
  heddle::cancellation_source src;
  heddle::future<void> never = heddle::sleep_until(rt, clock_type::time_point::max(), src.token());
  heddle::future<void> far = heddle::sleep_for(rt, std::chrono::hours(24 * 365 * 100));
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(never.is_ready());
  EXPECT_FALSE(far.is_ready());
  // Waiting for those deadlines, the engine sleeps: the idle process uses little CPU (a service
  // thread spinning on an overflowed timeout would use all of its core).
  if (!heddle_test::sanitized) {
    const double cpu0 = process_cpu_seconds();
    const auto w0 = clock_type::now();
    std::this_thread::sleep_for(200ms);
    const double wall = std::chrono::duration<double>(clock_type::now() - w0).count();
    EXPECT_LT(process_cpu_seconds() - cpu0, 0.5 * wall) << "the idle timer engine burns CPU";
  }
  const auto t0 = clock_type::now();
  heddle::sleep_for(rt, 3ms).get();
  EXPECT_GE(clock_type::now() - t0, 3ms);
  EXPECT_FALSE(never.is_ready());
  src.cancel();
  EXPECT_THROW(never.get(), heddle::operation_cancelled);
  EXPECT_FALSE(far.is_ready());
}

TEST(Timer, ForcedFromAWorkerAndFromOutside) {
  watchdog dog("Timer.ForcedFromAWorkerAndFromOutside", 60s);
  for (unsigned threads : {1u, 2u}) {
    heddle::runtime rt(threads);
    // A worker forces a timer: it neither deadlocks nor returns early.
    auto elapsed = rt.task([&] {
      const auto t0 = clock_type::now();
      heddle::sleep_for(20ms).get();  // the calling worker's runtime
      return clock_type::now() - t0;
    });
    EXPECT_GE(*elapsed, 20ms);
    // Every worker waits on a timer at once.
    std::vector<heddle::future<bool>> fs;
    for (unsigned i = 0; i < threads * 4; ++i)
      fs.push_back(rt.task([&rt, i] {
        const auto t0 = clock_type::now();
        const auto d = std::chrono::milliseconds(1 + i % 5);
        heddle::sleep_for(rt, d).wait();
        return clock_type::now() - t0 >= d;
      }));
    for (auto& f : fs) EXPECT_TRUE(*f);
    // A plain thread forces one (it sleeps in the kernel).
    const auto t0 = clock_type::now();
    heddle::sleep_for(rt, 15ms).wait();
    EXPECT_GE(clock_type::now() - t0, 15ms);
  }
}

// Without a runtime argument a timer belongs to the calling worker's runtime, or to the default one.
TEST(Timer, WithoutARuntimeArgument) {
  watchdog dog("Timer.WithoutARuntimeArgument", 60s);
  heddle::runtime rt(2);
  auto inner = rt.task([&rt] {
    return heddle::sleep_for(2ms).then(strategy::normal, [&rt] { return on_worker_of(rt); });
  });
  heddle::future<bool> on_rt = std::move(inner).get();
  EXPECT_TRUE(*on_rt);

  heddle::runtime& d = heddle::default_runtime();
  const auto t0 = clock_type::now();
  auto on_default = heddle::sleep_for(3ms).then(strategy::express, [&d] { return on_worker_of(d); });
  EXPECT_TRUE(*on_default);
  EXPECT_GE(clock_type::now() - t0, 3ms);
  heddle::sleep_until(clock_type::now() + 1ms).get();
}

// A short_task successor runs on the service thread; the timers and successors it starts from there
// belong to the same runtime, and starting a timer from the engine's own thread must not deadlock.
struct timer_chain {
  heddle::runtime* rt = nullptr;
  int left = 0;
  std::atomic<int> off_workers{0};
  heddle::promise<void> done;
  std::vector<heddle::future<bool>> checks;  // touched only by the chain, one step at a time
};

void chain_step(timer_chain* c) {
  if (heddle::core_detail::current_worker == nullptr) c->off_workers++;
  if (--c->left == 0) {
    c->done.set_value();
    return;
  }
  // No runtime given: from the service thread this is the runtime whose successor is running.
  c->checks.push_back(heddle::sleep_for(100us).then(strategy::normal, [c] { return on_worker_of(*c->rt); }));
  (void)heddle::sleep_for(*c->rt, 500us).then(strategy::short_task, [c] { chain_step(c); });
}

TEST(Timer, ChainOfTimersStartedFromTheServiceThread) {
  watchdog dog("Timer.ChainOfTimersStartedFromTheServiceThread", 60s);
  heddle::runtime rt(2);
  timer_chain c;
  c.rt = &rt;
  c.left = scaled(60, 20);
  const int steps = c.left;
  heddle::future<void> done = c.done.get_future();
  const auto t0 = clock_type::now();
  (void)heddle::sleep_for(rt, 500us).then(strategy::short_task, [&c] { chain_step(&c); });
  done.get();
  EXPECT_GE(clock_type::now() - t0, steps * 500us);
  EXPECT_EQ(c.off_workers.load(), steps);
  ASSERT_EQ(c.checks.size(), static_cast<std::size_t>(steps - 1));
  for (auto& f : c.checks) EXPECT_TRUE(*f);
}

// A successor that throws fails its own future and nothing else: the engine keeps firing.
TEST(Timer, ThrowingSuccessorsLeaveTheEngineRunning) {
  watchdog dog("Timer.ThrowingSuccessorsLeaveTheEngineRunning", 60s);
  heddle::runtime rt(2);
  for (strategy s : all_strategies) {
    auto bad = heddle::sleep_for(rt, 1ms).then(s, []() -> int { throw std::domain_error("successor"); });
    EXPECT_THROW(*bad, std::domain_error) << to_string(s);
    auto good = heddle::sleep_for(rt, 1ms).then(s, [] { return 5; });
    EXPECT_EQ(*good, 5) << to_string(s);
  }
}

TEST(Timer, WhenAllOfTimers) {
  watchdog dog("Timer.WhenAllOfTimers", 60s);
  heddle::runtime rt(2);
  const auto t0 = clock_type::now();
  auto both = heddle::when_all(heddle::sleep_for(rt, 12ms), heddle::sleep_for(rt, 4ms));
  auto after = std::move(both).then(strategy::normal, [&rt](auto) { return on_worker_of(rt); });
  EXPECT_TRUE(*after);
  EXPECT_GE(clock_type::now() - t0, 12ms);

  std::vector<heddle::future<void>> v;
  const auto t1 = clock_type::now();
  for (int i = 0; i < 50; ++i) v.push_back(heddle::sleep_for(rt, std::chrono::microseconds(100 * i)));
  auto all = heddle::when_all(std::move(v));
  EXPECT_EQ(all.get().size(), 50u);
  EXPECT_GE(clock_type::now() - t1, std::chrono::microseconds(100 * 49));
}

TEST(Timer, TwoRuntimesKeepTheirOwnTimers) {
  watchdog dog("Timer.TwoRuntimesKeepTheirOwnTimers", 60s);
  heddle::runtime a(1), b(2);
  std::vector<heddle::future<bool>> fs;
  for (int i = 0; i < 100; ++i) {
    heddle::runtime& rt = i % 2 ? a : b;
    fs.push_back(heddle::sleep_for(rt, std::chrono::microseconds(50 * (i % 7)))
                     .then(i % 3 ? strategy::normal : strategy::express, [&rt] { return on_worker_of(rt); }));
  }
  for (auto& f : fs) EXPECT_TRUE(*f);
  // A timer of one runtime started on a worker of the other: its successors run on its own runtime.
  auto cross = b.task([&a] {
    std::vector<heddle::future<bool>> v;
    for (strategy s : {strategy::normal, strategy::express})
      v.push_back(heddle::sleep_for(a, 1ms).then(s, [&a] { return on_worker_of(a); }));
    v.push_back(heddle::sleep_for(a, 1ms).then([&a] { return on_worker_of(a); }));
    return v;
  });
  for (auto& f : *cross) EXPECT_TRUE(*f);
}

// Stress: threads outside the runtime and tasks on its workers start many timers at once, with every
// strategy; each timer's successor runs exactly once, never early.
TEST(Timer, StressManyTimersFromThreadsAndWorkers) {
  watchdog dog("Timer.StressManyTimersFromThreadsAndWorkers", 120s);
  heddle::runtime rt(2);
  const int threads = 4;
  const int per_thread = scaled(3000, 300);
  const int total = 2 * threads * per_thread;  // threads plus as many tasks
  std::vector<std::atomic<int>> runs(total);
  std::atomic<int> early{0};
  auto start_batch = [&](int first) {
    std::vector<heddle::future<void>> fs;
    fs.reserve(per_thread);
    std::uint64_t seed = static_cast<std::uint64_t>(first) + 99;
    for (int i = first; i < first + per_thread; ++i) {
      seed = heddle_test::mix(seed);
      const auto deadline = clock_type::now() + std::chrono::microseconds(seed % 20'000);
      fs.push_back(heddle::sleep_until(rt, deadline).then(all_strategies[(seed >> 32) % 4], [&, i, deadline] {
        if (clock_type::now() < deadline) early++;
        runs[i].fetch_add(1, std::memory_order_relaxed);
      }));
    }
    return fs;
  };
  std::vector<std::vector<heddle::future<void>>> from_threads(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { from_threads[t] = start_batch(t * per_thread); });
  std::vector<heddle::future<std::vector<heddle::future<void>>>> from_tasks;
  for (int t = 0; t < threads; ++t) from_tasks.push_back(rt.task(start_batch, (threads + t) * per_thread));
  for (auto& th : ts) th.join();
  for (auto& v : from_threads)
    for (auto& f : v) f.get();
  for (auto& ft : from_tasks)
    for (auto& f : *ft) f.get();
  EXPECT_EQ(early.load(), 0);
  int wrong = 0;
  for (int i = 0; i < total; ++i)
    if (runs[i].load() != 1 && wrong++ < 5) ADD_FAILURE() << "successor " << i << " ran " << runs[i].load() << " times";
  EXPECT_EQ(wrong, 0);
}

// Stress: tasks on the workers sleep in a loop (each sleep forced by a worker), checked for lateness
// never being negative; the sleeps overlap across workers.
TEST(Timer, StressWorkersSleepingInLoops) {
  watchdog dog("Timer.StressWorkersSleepingInLoops", 120s);
  heddle::runtime rt(2);
  const int tasks = scaled(40, 10);
  const int sleeps = scaled(25, 10);
  std::vector<heddle::future<int>> fs;
  for (int t = 0; t < tasks; ++t)
    fs.push_back(rt.task([t] {
      int early = 0;
      for (int k = 0; k < sleeps; ++k) {
        const auto d = std::chrono::microseconds((t * 37 + k * 101) % 1500);
        const auto t0 = clock_type::now();
        heddle::sleep_for(d).get();
        if (clock_type::now() - t0 < d) early++;
      }
      return early;
    }));
  for (auto& f : fs) EXPECT_EQ(*f, 0);
}

// Dropping a timer's future (and its successor's) is fine: the successor still runs, nothing leaks.
TEST(Timer, DroppedFuturesStillComplete) {
  watchdog dog("Timer.DroppedFuturesStillComplete", 60s);
  heddle::runtime rt(2);
  std::atomic<int> ran{0};
  const int n = scaled(500, 100);
  for (int i = 0; i < n; ++i) {
    (void)heddle::sleep_for(rt, std::chrono::microseconds(i % 300));
    (void)heddle::sleep_for(rt, std::chrono::microseconds(i % 200)).then(all_strategies[i % 4], [&ran] { ran++; });
  }
  EXPECT_TRUE(eventually([&] { return ran.load() == n; }, 30s)) << ran.load() << " of " << n;
}

}  // namespace
