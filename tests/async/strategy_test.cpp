// SPDX-License-Identifier: Apache-2.0
// Successor strategies (heddle/core/strategy.hpp) on timers, promises and tasks: where each runs
// (normal and express on the workers, short_task on the completing thread, asap on a worker or the
// auxiliary pool, exactly once), express overtaking queued work while every worker is busy, parked
// workers woken, what a short_task successor spawns (the express lane of its runtime), and the
// per-strategy latency statistics (exact counts, ordered percentiles, plausible means and maxima).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>
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

bool on_a_worker() { return heddle::core_detail::current_worker != nullptr; }

// then(s, g) called on a worker of rt: a promise's future has no runtime of its own, so its
// successor belongs to the runtime where then() is called.
template <class T, class G>
auto then_on(heddle::runtime& rt, heddle::future<T> f, strategy s, G g) {
  return rt.task([&] { return std::move(f).then(s, std::move(g)); }).get();
}

// Spins for d (a task that holds its worker).
void busy_for(std::chrono::nanoseconds d) {
  const auto end = clock_type::now() + d;
  while (clock_type::now() < end) heddle_test::spin_work(100);
}

// Holds every worker of rt in a task until release() (or the destructor).
class hold_workers {
 public:
  explicit hold_workers(heddle::runtime& rt) {
    for (unsigned i = 0; i < rt.num_threads(); ++i)
      tasks_.push_back(rt.task([this] {
        started_.fetch_add(1);
        while (!released_.load()) std::this_thread::yield();
      }));
    while (started_.load() < static_cast<int>(rt.num_threads())) std::this_thread::yield();
  }
  void release() {
    released_ = true;
    for (auto& t : tasks_) t.get();
    tasks_.clear();
  }
  ~hold_workers() {
    if (!tasks_.empty()) release();
  }

 private:
  std::atomic<int> started_{0};
  std::atomic<bool> released_{false};
  std::vector<heddle::future<void>> tasks_;
};

TEST(Strategy, NormalAndExpressRunOnTheWorkers) {
  watchdog dog("Strategy.NormalAndExpressRunOnTheWorkers", 60s);
  heddle::runtime rt(2), other(1);
  for (strategy s : {strategy::normal, strategy::express}) {
    // A timer (completed by the service thread).
    auto t = heddle::sleep_for(rt, 1ms).then(s, [&rt] { return on_worker_of(rt); });
    EXPECT_TRUE(*t) << to_string(s);
    // A promise set by a foreign thread, by the main thread and by a worker.
    heddle::promise<int> p1, p2, p3, p5;
    auto f1 = then_on(rt, p1.get_future(), s, [&rt](int v) { return on_worker_of(rt) ? v : -1; });
    auto f2 = then_on(rt, p2.get_future(), s, [&rt](int v) { return on_worker_of(rt) ? v : -1; });
    auto f3 = then_on(rt, p3.get_future(), s, [&rt](int v) { return on_worker_of(rt) ? v : -1; });
    auto f5 = then_on(rt, p5.get_future(), s, [&rt](int v) { return on_worker_of(rt) ? v : -1; });
    std::thread th([&] { p1.set_value(1); });
    p2.set_value(2);
    rt.task([&] { p3.set_value(3); }).get();
    other.task([&] { p5.set_value(5); }).get();  // a worker of another runtime
    th.join();
    EXPECT_EQ(*f1, 1) << to_string(s);
    EXPECT_EQ(*f2, 2) << to_string(s);
    EXPECT_EQ(*f3, 3) << to_string(s);
    EXPECT_EQ(*f5, 5) << to_string(s);
    // A task's future.
    auto f4 = rt.task([] { return 4; }).then(s, [&rt](int v) { return on_worker_of(rt) ? v : -1; });
    EXPECT_EQ(*f4, 4) << to_string(s);
  }
}

// A normal successor completed outside the runtime goes through the injection queue; an express one
// through the express lane.
TEST(Strategy, NormalGoesThroughTheInjectionQueueExpressThroughTheExpressLane) {
  watchdog dog("Strategy.NormalGoesThroughTheInjectionQueueExpressThroughTheExpressLane", 60s);
  heddle::runtime rt(2);
  const int n = 50;
  std::vector<heddle::promise<void>> ps(2 * n);
  std::vector<heddle::future<void>> fs;
  rt.task([&] {
      for (int i = 0; i < 2 * n; ++i)
        fs.push_back(ps[i].get_future().then(i < n ? strategy::normal : strategy::express, [] {}));
    }).get();
  const heddle::runtime_stats before = rt.stats();
  for (auto& p : ps) p.set_value();
  for (auto& f : fs) f.get();
  const heddle::runtime_stats after = rt.stats();
  EXPECT_GE(after.injected - before.injected, static_cast<std::uint64_t>(n));
  EXPECT_GE(after.express - before.express, static_cast<std::uint64_t>(n));
}

// Every worker runs a long task and a backlog of queued tasks waits: an express successor runs as soon
// as a worker finishes its task, ahead of the backlog.
TEST(Strategy, ExpressOvertakesQueuedWorkWhileEveryWorkerIsBusy) {
  watchdog dog("Strategy.ExpressOvertakesQueuedWorkWhileEveryWorkerIsBusy", 60s);
  for (unsigned threads : {1u, 2u}) {
    heddle::runtime rt(threads);
    heddle::promise<void> p;
    std::atomic<int> backlog_started{0};
    std::atomic<bool> stop{false};
    int backlog_seen = -1;
    bool on_rt = false;
    auto succ = then_on(rt, p.get_future(), strategy::express, [&] {
      backlog_seen = backlog_started.load();
      on_rt = on_worker_of(rt);
      stop = true;
    });
    hold_workers hold(rt);
    const int backlog = 300;
    std::vector<heddle::future<void>> queued;
    for (int i = 0; i < backlog; ++i)
      queued.push_back(rt.task([&] {
        backlog_started++;
        if (!stop.load()) busy_for(1ms);
      }));
    p.set_value();  // the successor is now on the express lane, behind the running tasks
    hold.release();
    succ.get();
    for (auto& f : queued) f.get();
    EXPECT_TRUE(on_rt);
    // A worker looks at the express lane at each task boundary: at most a few backlog tasks (the
    // other workers', a descheduled worker's) can start first.
    EXPECT_LE(backlog_seen, 30) << threads << " workers: the express successor waited behind queued work";
  }
}

// The same with a timer: its express successor does not wait for the backlog either.
TEST(Strategy, TimerExpressSuccessorOvertakesQueuedWork) {
  watchdog dog("Strategy.TimerExpressSuccessorOvertakesQueuedWork", 60s);
  heddle::runtime rt(1);
  std::atomic<int> backlog_started{0};
  std::atomic<bool> stop{false};
  int backlog_seen = -1;
  std::vector<heddle::future<void>> queued;
  auto t = heddle::sleep_for(rt, 2ms);
  auto succ = std::move(t).then(strategy::express, [&] {
    backlog_seen = backlog_started.load();
    stop = true;
  });
  // The worker works through 1 ms tasks; the timer fires after about two of them.
  const int backlog = 500;
  for (int i = 0; i < backlog; ++i)
    queued.push_back(rt.task([&] {
      backlog_started++;
      if (!stop.load()) busy_for(1ms);
    }));
  succ.get();
  for (auto& f : queued) f.get();
  EXPECT_GE(backlog_seen, 0);
  EXPECT_LT(backlog_seen, backlog / 2) << "the express successor waited for most of the queued work";
}

// Successors reach workers that are asleep in the kernel: all of them parked, nothing else to do.
TEST(Strategy, ParkedWorkersAreWoken) {
  watchdog dog("Strategy.ParkedWorkersAreWoken", 60s);
  heddle::runtime rt(heddle::runtime_options{.threads = 2, .spin_before_park = 10us});
  for (strategy s : all_strategies) {
    for (int round = 0; round < 3; ++round) {
      heddle::promise<void> p;
      std::atomic<bool> ran{false};
      auto succ = then_on(rt, p.get_future(), s, [&] { ran = true; });
      std::this_thread::sleep_for(20ms);  // every worker parks
      p.set_value();
      EXPECT_TRUE(eventually([&] { return ran.load(); })) << to_string(s) << ": not started within 10 s";
      succ.get();
      // A timer firing while every worker sleeps.
      std::atomic<bool> t_ran{false};
      auto t = heddle::sleep_for(rt, 15ms).then(s, [&] { t_ran = true; });
      EXPECT_TRUE(eventually([&] { return t_ran.load(); }))
          << to_string(s) << " after a timer: not started within 10 s";
      t.get();
    }
  }
  EXPECT_GT(rt.stats().parks, 0u);
}

// The only worker forces a successor that needs a worker to run (normal, express) or may get one
// (asap): it must run it while it waits, not sleep on it.
TEST(Strategy, TheOnlyWorkerForcesASuccessorThatNeedsAWorker) {
  watchdog dog("Strategy.TheOnlyWorkerForcesASuccessorThatNeedsAWorker", 60s);
  heddle::runtime rt(1);
  for (strategy s : all_strategies) {
    auto r = rt.task([s, &rt] {
      auto t = heddle::sleep_for(2ms).then(s, [] { return 3; });
      heddle::promise<int> p;
      auto q = p.get_future().then(s, [&rt](int v) { return on_worker_of(rt) ? v : -v; });
      std::thread setter([&p] { p.set_value(4); });
      const int a = *t;
      const int b = *q;
      setter.join();
      return a * 10 + b;
    });
    const int expect = s == strategy::normal || s == strategy::express ? 34 : 0;
    const int got = *r;
    if (expect) EXPECT_EQ(got, expect) << to_string(s);
    else EXPECT_TRUE(got == 34 || got == 26) << to_string(s) << ": " << got;  // pool or worker, any thread
  }
}

// A chain of promises, each set by the short_task successor of the one before: the whole chain runs
// on the thread that sets the first, nested, in order.
TEST(Strategy, ChainOfShortTaskSuccessorsSettingPromises) {
  watchdog dog("Strategy.ChainOfShortTaskSuccessorsSettingPromises", 60s);
  heddle::runtime rt(2);
  const int n = 1000;
  std::vector<heddle::promise<int>> ps(n + 1);
  std::vector<heddle::future<void>> links;
  std::vector<std::thread::id> ran_on(n);
  rt.task([&] {
      for (int i = 0; i < n; ++i)
        links.push_back(ps[i].get_future().then(strategy::short_task, [&, i](int v) {
          ran_on[i] = std::this_thread::get_id();
          ps[i + 1].set_value(v + 1);
        }));
    }).get();
  auto last = ps[n].get_future();
  std::thread::id setter_id;
  std::thread setter([&] {
    setter_id = std::this_thread::get_id();
    ps[0].set_value(0);
    // Everything ran during that call.
    EXPECT_TRUE(last.is_ready());
  });
  setter.join();
  EXPECT_EQ(*last, n);
  for (auto& l : links) l.get();
  for (int i = 0; i < n; ++i) ASSERT_EQ(ran_on[i], setter_id) << i;
  EXPECT_EQ(rt.stats().latency(strategy::short_task).count, static_cast<std::uint64_t>(n));
}

// short_task runs on the thread that completes the dependency: the timer engine's service thread (one
// per runtime, not a worker), or the thread that sets the promise.
TEST(Strategy, ShortTaskRunsOnTheCompletingThread) {
  watchdog dog("Strategy.ShortTaskRunsOnTheCompletingThread", 60s);
  heddle::runtime rt(2);
  const auto main_id = std::this_thread::get_id();
  // Timers: all on one thread that is neither a worker nor this one. (A successor attached to a timer
  // that has already fired starts on the thread calling then(): the deadlines leave time to attach.)
  std::set<std::thread::id> timer_threads;
  std::mutex m;
  std::atomic<int> on_workers{0};
  std::vector<heddle::future<void>> ts;
  for (int i = 0; i < 40; ++i)
    ts.push_back(
        heddle::sleep_for(rt, 20ms + std::chrono::microseconds(100 * (i % 10))).then(strategy::short_task, [&] {
          if (on_a_worker()) on_workers++;
          std::lock_guard lock(m);
          timer_threads.insert(std::this_thread::get_id());
        }));
  for (auto& t : ts) t.get();
  EXPECT_EQ(on_workers.load(), 0);
  timer_threads.erase(main_id);
  EXPECT_EQ(timer_threads.size(), 1u)
      << "the timers of one runtime completed on several threads, or none on its engine's";

  // A promise set by a foreign thread, by this thread, by a worker of rt and by a worker of another
  // runtime: the successor runs right there, during set_value.
  auto check = [&](auto&& set_from) {
    heddle::promise<int> p;
    std::thread::id ran_on{};
    std::thread::id set_on{};
    bool during_set = false;
    std::atomic<bool> setting{false};
    auto f = then_on(rt, p.get_future(), strategy::short_task, [&](int v) {
      ran_on = std::this_thread::get_id();
      during_set = setting.load();
      return v;
    });
    set_from([&] {
      set_on = std::this_thread::get_id();
      setting = true;
      p.set_value(5);
      setting = false;
    });
    EXPECT_EQ(*f, 5);
    EXPECT_EQ(ran_on, set_on);
    EXPECT_TRUE(during_set);
  };
  check([](auto set) { std::thread(set).join(); });
  check([](auto set) { set(); });
  check([&rt](auto set) { rt.task(set).get(); });
  heddle::runtime other(1);
  check([&other](auto set) { other.task(set).get(); });
}

// What a short_task successor spawns with heddle::task (and the continuations it makes) goes to its
// runtime's express lane when it runs on a thread that is not one of that runtime's workers.
TEST(Strategy, ShortTaskSpawnsGoToItsRuntimesExpressLane) {
  watchdog dog("Strategy.ShortTaskSpawnsGoToItsRuntimesExpressLane", 60s);
  heddle::runtime rt(2);
  heddle::sleep_for(rt, 0ms).get();  // the engine is up
  const int k = 10;
  // From the timer's service thread.
  {
    std::vector<heddle::future<bool>> spawned;
    const heddle::runtime_stats before = rt.stats();
    auto t = heddle::sleep_for(rt, 1ms).then(strategy::short_task, [&] {
      for (int i = 0; i < k; ++i) spawned.push_back(heddle::task([&rt] { return on_worker_of(rt); }));
    });
    t.get();
    ASSERT_EQ(spawned.size(), static_cast<std::size_t>(k));
    for (auto& f : spawned) EXPECT_TRUE(*f) << "a task spawned by a timer's short_task successor ran elsewhere";
    EXPECT_EQ(rt.stats().express - before.express, static_cast<std::uint64_t>(k));
  }
  // From a foreign thread setting a promise.
  {
    heddle::promise<void> p;
    std::vector<heddle::future<bool>> spawned;
    heddle::future<bool> continued;
    auto succ = then_on(rt, p.get_future(), strategy::short_task, [&] {
      for (int i = 0; i < k; ++i) spawned.push_back(heddle::task([&rt] { return on_worker_of(rt); }));
      continued = heddle::task([] { return 1; }).then([&rt](int) { return on_worker_of(rt); });
    });
    const heddle::runtime_stats before = rt.stats();
    std::thread([&] { p.set_value(); }).join();
    succ.get();
    for (auto& f : spawned) EXPECT_TRUE(*f) << "a task spawned by a promise's short_task successor ran elsewhere";
    EXPECT_TRUE(*continued);
    EXPECT_GE(rt.stats().express - before.express, static_cast<std::uint64_t>(k + 1));
  }
}

// The completing thread may be a worker of another runtime: what the successor spawns still belongs
// to the successor's runtime.
TEST(Strategy, ShortTaskSpawnsFromAnotherRuntimesWorkerStayOnTheirRuntime) {
  watchdog dog("Strategy.ShortTaskSpawnsFromAnotherRuntimesWorkerStayOnTheirRuntime", 60s);
  heddle::runtime rt(2), other(1);
  heddle::promise<void> p;
  std::vector<heddle::future<bool>> spawned;
  auto succ = then_on(rt, p.get_future(), strategy::short_task, [&] {
    for (int i = 0; i < 4; ++i) spawned.push_back(heddle::task([&rt] { return on_worker_of(rt); }));
  });
  const heddle::runtime_stats before = rt.stats();
  other.task([&] { p.set_value(); }).get();
  succ.get();
  for (auto& f : spawned) EXPECT_TRUE(*f) << "ran on the other runtime";
  EXPECT_GE(rt.stats().express - before.express, 4u);
}

// asap: runs exactly once, by a worker or by the auxiliary pool, and the two counters say which.
TEST(Strategy, AsapRunsExactlyOnce) {
  watchdog dog("Strategy.AsapRunsExactlyOnce", 60s);
  heddle::runtime rt(2);
  const int n = scaled(2000, 300);
  std::vector<std::atomic<int>> runs(n);
  std::vector<heddle::promise<int>> ps(n);
  std::vector<heddle::future<int>> fs(n);
  std::atomic<int> off_rt{0};
  rt.task([&] {
      for (int i = 0; i < n; ++i)
        fs[i] = ps[i].get_future().then(strategy::asap, [&, i](int v) {
          runs[i].fetch_add(1);
          // Either a worker of rt or the pool (a thread that is no worker at all).
          if (on_a_worker() && !on_worker_of(rt)) off_rt++;
          return v * 2;
        });
    }).get();
  const heddle::runtime_stats before = rt.stats();
  for (int i = 0; i < n; ++i) ps[i].set_value(i);
  long sum = 0;
  for (auto& f : fs) sum += *f;
  EXPECT_EQ(sum, static_cast<long>(n) * (n - 1));
  int wrong = 0;
  for (auto& r : runs) wrong += r.load() != 1;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(off_rt.load(), 0);
  const heddle::runtime_stats after = rt.stats();
  EXPECT_EQ((after.asap_by_pool - before.asap_by_pool) + (after.asap_by_workers - before.asap_by_workers),
            static_cast<std::uint64_t>(n));
  EXPECT_EQ(after.latency(strategy::asap).count - before.latency(strategy::asap).count, static_cast<std::uint64_t>(n));
}

// With every worker held by a long task, the pool runs an asap successor meanwhile.
TEST(Strategy, AsapRunsByThePoolWhileEveryWorkerIsBusy) {
  watchdog dog("Strategy.AsapRunsByThePoolWhileEveryWorkerIsBusy", 60s);
  heddle::runtime rt(1);
  heddle::promise<void> p;
  std::atomic<bool> ran{false};
  std::atomic<bool> ran_on_worker{false};
  auto succ = then_on(rt, p.get_future(), strategy::asap, [&] {
    ran_on_worker = on_a_worker();
    ran = true;
  });
  const heddle::runtime_stats before = rt.stats();
  {
    hold_workers hold(rt);
    p.set_value();
    EXPECT_TRUE(eventually([&] { return ran.load(); })) << "the asap pool did not run the successor within 10 s";
    EXPECT_FALSE(ran_on_worker.load());
    // The same for a timer.
    std::atomic<bool> t_ran{false};
    auto t = heddle::sleep_for(rt, 1ms).then(strategy::asap, [&] { t_ran = !on_a_worker(); });
    EXPECT_TRUE(eventually([&] { return t_ran.load(); }));
    hold.release();
    t.get();
  }
  succ.get();
  const heddle::runtime_stats after = rt.stats();
  EXPECT_EQ(after.asap_by_pool - before.asap_by_pool, 2u);
  EXPECT_EQ(after.asap_by_workers - before.asap_by_workers, 0u);
}

// Stress: thousands of promises completed by 8 foreign threads, asap successors racing pool and
// workers; each runs exactly once and the counters add up.
TEST(Strategy, AsapStressFromEightForeignThreads) {
  watchdog dog("Strategy.AsapStressFromEightForeignThreads", 120s);
  heddle::runtime rt(2);
  const int threads = 8;
  const int per_thread = scaled(2000, 200);
  const int n = threads * per_thread;
  std::vector<std::atomic<int>> runs(n);
  std::vector<heddle::promise<long>> ps(n);
  std::vector<heddle::future<long>> fs(n);
  rt.task([&] {
      for (int i = 0; i < n; ++i)
        fs[i] = ps[i].get_future().then(strategy::asap, [&runs, i](long v) {
          runs[i].fetch_add(1, std::memory_order_relaxed);
          // A successor spawning a task: it must land on rt (a pool thread lends it the runtime).
          return v + 1;
        });
    }).get();
  const heddle::runtime_stats before = rt.stats();
  std::atomic<int> go{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      go++;
      while (go.load() < threads) std::this_thread::yield();
      for (int k = 0; k < per_thread; ++k) ps[k * threads + t].set_value(k * threads + t);
    });
  for (auto& th : ts) th.join();
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    if (*fs[i] != i + 1) wrong++;
  EXPECT_EQ(wrong, 0);
  for (int i = 0; i < n; ++i)
    if (runs[i].load() != 1 && wrong++ < 5) ADD_FAILURE() << "successor " << i << " ran " << runs[i].load() << " times";
  EXPECT_EQ(wrong, 0);
  const heddle::runtime_stats after = rt.stats();
  const std::uint64_t by_pool = after.asap_by_pool - before.asap_by_pool;
  const std::uint64_t by_workers = after.asap_by_workers - before.asap_by_workers;
  EXPECT_EQ(by_pool + by_workers, static_cast<std::uint64_t>(n))
      << by_pool << " by the pool, " << by_workers << " by workers";
  EXPECT_EQ(after.latency(strategy::asap).count - before.latency(strategy::asap).count, static_cast<std::uint64_t>(n));
}

// Tasks spawned by asap successors belong to the successor's runtime, whoever wins.
TEST(Strategy, AsapSuccessorsSpawnOnTheirRuntime) {
  watchdog dog("Strategy.AsapSuccessorsSpawnOnTheirRuntime", 60s);
  heddle::runtime rt(2);
  const int n = scaled(300, 60);
  std::vector<heddle::future<bool>> fs;  // then unwraps the task's future
  for (int i = 0; i < n; ++i)
    fs.push_back(heddle::sleep_for(rt, std::chrono::microseconds(i % 50)).then(strategy::asap, [&rt] {
      return heddle::task([&rt] { return on_worker_of(rt); });
    }));
  int wrong = 0;
  for (auto& f : fs) wrong += !std::move(f).get();
  EXPECT_EQ(wrong, 0);
}

void expect_plausible(const heddle::latency_summary& l, const char* what) {
  if (l.count == 0) return;
  EXPECT_LE(l.p50_ns, l.p99_ns) << what;
  EXPECT_LE(l.p99_ns, l.max_ns) << what;
  EXPECT_GE(l.mean_ns, 0.0) << what;
  EXPECT_LE(l.mean_ns, static_cast<double>(l.max_ns) * 1.0000001 + 1) << what;
  // Every sample is at most the maximum and none is negative: the sum is at least the maximum.
  EXPECT_GE(l.mean_ns * static_cast<double>(l.count), static_cast<double>(l.max_ns) * 0.999999) << what;
  EXPECT_LT(l.max_ns, 600'000'000'000ull) << what;  // not garbage
}

// The latency statistics count exactly the successors started with a strategy, per strategy; plain
// then(f) successors of tasks (released on their runtime's workers) are not counted.
TEST(Strategy, LatencyStatsCountExactlyTheTimedSuccessors) {
  watchdog dog("Strategy.LatencyStatsCountExactlyTheTimedSuccessors", 60s);
  heddle::runtime rt(2);
  for (strategy s : all_strategies) EXPECT_EQ(rt.stats().latency(s).count, 0u) << to_string(s);
  const int per[4] = {scaled(37, 11), scaled(23, 7), scaled(51, 13), scaled(29, 9)};
  std::vector<heddle::future<void>> fs;
  std::vector<heddle::promise<void>> ps(per[0] + per[1] + per[2] + per[3]);
  std::size_t next_promise = 0;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < per[k]; ++i) {
      switch (i % 3) {
        case 0:
          fs.push_back(heddle::sleep_for(rt, std::chrono::microseconds(i * 10)).then(all_strategies[k], [] {}));
          break;
        case 1: fs.push_back(rt.task([] {}).then(all_strategies[k], [] {})); break;
        default: fs.push_back(then_on(rt, ps[next_promise++].get_future(), all_strategies[k], [] {}));
      }
    }
  }
  // Plain then(f) of tasks, made on a worker: released on the workers, never measured.
  rt.task([&fs] {
      for (int i = 0; i < 20; ++i) fs.push_back(heddle::task([] {}).then([] {}));
    }).get();
  for (std::size_t i = 0; i < ps.size(); ++i) ps[i].set_value();
  for (auto& f : fs) f.get();
  const heddle::runtime_stats st = rt.stats();
  std::uint64_t expect[4];
  for (int k = 0; k < 4; ++k) expect[k] = static_cast<std::uint64_t>(per[k]);
  for (int k = 0; k < 4; ++k) {
    const heddle::latency_summary& l = st.latency(all_strategies[k]);
    EXPECT_EQ(l.count, expect[k]) << to_string(all_strategies[k]);
    expect_plausible(l, to_string(all_strategies[k]));
  }
  // heddle::stats() on one of rt's workers is rt's.
  auto from_worker = rt.task([] { return heddle::stats(); });
  const heddle::runtime_stats w = *from_worker;
  EXPECT_EQ(w.workers, 2u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(w.latency(all_strategies[k]).count, expect[k]);
}

// Plain then(f) of a source completed outside the workers (a timer, a promise) starts by
// default_strategy and is measured under it; plain then(f) of a task made on a worker is not measured.
TEST(Strategy, PlainThenOfTimersAndPromisesStartsByTheDefaultStrategy) {
  watchdog dog("Strategy.PlainThenOfTimersAndPromisesStartsByTheDefaultStrategy", 60s);
  heddle::runtime rt(2);
  const int timers = 20, promises = 10;
  std::vector<heddle::future<bool>> fs;
  for (int i = 0; i < timers; ++i)
    fs.push_back(heddle::sleep_for(rt, std::chrono::microseconds(50 * i)).then([&rt] { return on_worker_of(rt); }));
  std::vector<heddle::promise<int>> ps(promises);
  for (int i = 0; i < promises; ++i)
    fs.push_back(rt.task([&ps, &rt, i] {
                     return ps[i].get_future().then([&rt](int) { return on_worker_of(rt); });
                   }).get());
  rt.task([&fs, &rt] {
      for (int i = 0; i < 20; ++i) fs.push_back(heddle::task([] {}).then([&rt] { return on_worker_of(rt); }));
    }).get();
  std::thread setter([&] {
    for (int i = 0; i < promises; i += 2) ps[i].set_value(i);
  });
  for (int i = 1; i < promises; i += 2) ps[i].set_value(i);
  setter.join();
  for (auto& f : fs) EXPECT_TRUE(*f);
  const heddle::runtime_stats st = rt.stats();
  for (strategy s : all_strategies)
    EXPECT_EQ(st.latency(s).count, s == heddle::default_strategy ? static_cast<std::uint64_t>(timers + promises) : 0u)
        << to_string(s);
  expect_plausible(st.latency(heddle::default_strategy), "default_strategy");
}

// A successor that waits behind a busy worker reports at least the time it waited; one that starts
// at once (short_task) reports a small latency. Lower bounds only.
TEST(Strategy, LatencyStatsMeasureTheWait) {
  watchdog dog("Strategy.LatencyStatsMeasureTheWait", 60s);
  heddle::runtime rt(1);
  for (strategy s : {strategy::normal, strategy::express}) {
    heddle::promise<void> p;
    auto succ = then_on(rt, p.get_future(), s, [] {});
    clock_type::time_point set_done, released;
    {
      hold_workers hold(rt);
      p.set_value();
      set_done = clock_type::now();
      std::this_thread::sleep_for(30ms);
      released = clock_type::now();
      hold.release();
    }
    succ.get();
    const heddle::latency_summary l = rt.stats().latency(s);
    ASSERT_EQ(l.count, 1u) << to_string(s);
    const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(released - set_done).count();
    EXPECT_GE(l.max_ns, static_cast<std::uint64_t>(waited)) << to_string(s);
    EXPECT_GE(l.mean_ns, static_cast<double>(waited)) << to_string(s);
    expect_plausible(l, to_string(s));
  }
  // A timer's successor: its latency starts at the completion, not at the start of the timer.
  auto t = heddle::sleep_for(rt, 200ms).then(strategy::short_task, [] {});
  t.get();
  const heddle::latency_summary l = rt.stats().latency(strategy::short_task);
  ASSERT_EQ(l.count, 1u);
  EXPECT_LT(l.max_ns, 150'000'000u) << "the latency included the timer's own wait";
}

// when_all over async sources, then a strategy: runs once every input is there, with their values.
TEST(Strategy, WhenAllThenStrategy) {
  watchdog dog("Strategy.WhenAllThenStrategy", 60s);
  heddle::runtime rt(2);
  for (strategy s : all_strategies) {
    heddle::promise<int> p;
    const auto t0 = clock_type::now();
    auto all = heddle::when_all(heddle::sleep_for(rt, 5ms), p.get_future(), rt.task([] { return 2; }));
    auto r = std::move(all).then(s, [&](std::tuple<std::monostate, int, int> v) {
      return std::pair(std::get<1>(v) * std::get<2>(v), clock_type::now());
    });
    std::thread th([&] { p.set_value(21); });
    auto [value, when] = *r;
    th.join();
    EXPECT_EQ(value, 42) << to_string(s);
    EXPECT_GE(when - t0, 5ms) << to_string(s);
  }
}

// Stress: every strategy at once on a mix of sources completed from several threads; every
// successor runs once, on the thread its strategy allows.
TEST(Strategy, StressMixedStrategiesAndSources) {
  watchdog dog("Strategy.StressMixedStrategiesAndSources", 120s);
  heddle::runtime rt(2);
  const int n = scaled(8000, 800);
  std::vector<std::atomic<int>> runs(n);
  std::atomic<int> misplaced{0};
  std::vector<heddle::promise<int>> ps(n);
  std::vector<heddle::future<int>> fs(n);
  rt.task([&] {
      for (int i = 0; i < n; ++i) {
        const strategy s = all_strategies[i % 4];
        heddle::future<int> src = i % 3 == 0 ? heddle::sleep_for(rt, std::chrono::microseconds(i % 500)).then([i] {
          return i;
        })
                                             : ps[i].get_future();
        fs[i] = std::move(src).then(s, [&, i, s](int v) {
          runs[i].fetch_add(1, std::memory_order_relaxed);
          const bool worker = on_worker_of(rt);
          if ((s == strategy::normal || s == strategy::express) && !worker) misplaced++;
          if (on_a_worker() && !worker) misplaced++;
          return v + i;
        });
      }
    }).get();
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = t; i < n; i += 4)
        if (i % 3 != 0) ps[i].set_value(i);
    });
  for (auto& th : ts) th.join();
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    if (*fs[i] != 2 * i) wrong++;
    if (runs[i].load() != 1) wrong++;
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(misplaced.load(), 0);
}

}  // namespace
