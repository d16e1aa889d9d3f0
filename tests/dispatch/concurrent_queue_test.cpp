// SPDX-License-Identifier: Apache-2.0
// heddle::concurrent_queue: async runs every item once on the runtime's workers (concurrently);
// sync returns values and exceptions from foreign threads, workers and serial queue items; after()
// and at() never run early; the default queue is the calling worker's runtime; a stopping runtime
// discards what is pending; an async item's exception terminates with a report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/core/detail/service.hpp>  // core_stopping
#include <heddle/dispatch.hpp>
#include <heddle/heddle.hpp>

#include "dispatch_test_support.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/dispatch/detail/access.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using heddle::concurrent_queue;
using heddle::serial_queue;
using heddle_test::eventually;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::what_of;

TEST(ConcurrentQueue, AsyncRunsEveryItemOnceOnTheWorkers) {
  watchdog dog("ConcurrentQueue.AsyncRunsEveryItemOnceOnTheWorkers", 60s);
  heddle::runtime rt(4);
  concurrent_queue cq(rt);
  const int n = scaled(20000, 2000);
  std::vector<std::atomic<int>> runs(2 * n);
  std::atomic<int> off_worker{0};
  std::atomic<int> done{0};
  auto item = [&](int id) {
    return [&, id] {
      runs[id]++;
      if (!heddle_test::on_worker_of(rt)) off_worker++;
      done++;
    };
  };
  std::thread foreign([&] {
    for (int i = 0; i < n; ++i) cq.async(item(i));
  });
  heddle::parallel_for(n, 2 * n, [&](int i) { cq.async(item(i)); });
  foreign.join();
  ASSERT_TRUE(eventually([&] { return done.load() == 2 * n; }, std::chrono::seconds(60)));
  std::this_thread::sleep_for(10ms);
  int wrong = 0;
  for (int i = 0; i < 2 * n; ++i)
    if (runs[i].load() != 1 && wrong++ < 5) ADD_FAILURE() << "item " << i << " ran " << runs[i].load() << " times";
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(off_worker.load(), 0);
}

// Items are not serialized: two items can be inside at the same time.
TEST(ConcurrentQueue, ItemsRunConcurrently) {
  watchdog dog("ConcurrentQueue.ItemsRunConcurrently", 60s);
  heddle::runtime rt(2);
  concurrent_queue cq(rt);
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
  for (int i = 0; i < 2; ++i)
    cq.async([&] {
      arrived++;
      if (eventually([&] { return arrived.load() == 2; })) met++;
    });
  EXPECT_TRUE(eventually([&] { return met.load() == 2; }, std::chrono::seconds(30)));
}

TEST(ConcurrentQueue, SyncReturnsValuesAndExceptions) {
  watchdog dog("ConcurrentQueue.SyncReturnsValuesAndExceptions", 60s);
  heddle::runtime rt(2);
  concurrent_queue cq(rt);
  EXPECT_EQ(cq.sync([] { return 41 + 1; }), 42);
  auto p = cq.sync([] { return std::make_unique<std::string>("moved"); });
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, "moved");
  int side = 0;
  cq.sync([&] { side = 3; });
  EXPECT_EQ(side, 3);
  EXPECT_TRUE(cq.sync([&] { return heddle_test::on_worker_of(rt); }));
  EXPECT_EQ(what_of<std::runtime_error>([&] { cq.sync([]() -> int { throw std::runtime_error("cq boom"); }); }),
            "cq boom");
  // From a worker (helping while it waits), nested.
  auto f = rt.task([&] {
    int sum = 0;
    for (int i = 0; i < 100; ++i) sum += cq.sync([i] { return i; });
    const std::string m = what_of<std::logic_error>([&] { cq.sync([] { throw std::logic_error("from a worker"); }); });
    return m == "from a worker" ? sum : -1;
  });
  EXPECT_EQ(*f, 4950);
  // From an item of a serial queue.
  serial_queue q(rt, "calls-cq");
  int from_item = 0;
  q.async([&] { from_item = cq.sync([] { return 7; }); });
  q.sync([] {});
  EXPECT_EQ(from_item, 7);
  // From many threads at once.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < scaled(500, 100); ++i)
        if (cq.sync([t, i] { return t * 1000 + i; }) != t * 1000 + i) wrong++;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ConcurrentQueue, AfterNeverEarly) {
  watchdog dog("ConcurrentQueue.AfterNeverEarly", 60s);
  heddle::runtime rt(2);
  concurrent_queue cq(rt);
  const std::vector<std::chrono::milliseconds> delays{0ms, 2ms, 10ms, 30ms, 1ms};
  std::vector<clock_type::time_point> start(delays.size()), ran(delays.size());
  std::vector<std::atomic<bool>> on_worker(delays.size());
  std::atomic<std::size_t> done{0};
  for (std::size_t i = 0; i < delays.size(); ++i) {
    start[i] = clock_type::now();
    cq.after(delays[i], [&, i] {
      ran[i] = clock_type::now();
      on_worker[i] = heddle_test::on_worker_of(rt);
      done++;
    });
  }
  ASSERT_TRUE(eventually([&] { return done.load() == delays.size(); }));
  for (std::size_t i = 0; i < delays.size(); ++i) {
    EXPECT_GE(ran[i] - start[i], delays[i]) << i;
    EXPECT_TRUE(on_worker[i].load()) << i;
  }
  const auto deadline = clock_type::now() + 15ms;
  std::atomic<bool> at_ran{false};
  clock_type::time_point at_time;
  cq.at(deadline, [&] {
    at_time = clock_type::now();
    at_ran = true;
  });
  ASSERT_TRUE(eventually([&] { return at_ran.load(); }));
  EXPECT_GE(at_time, deadline);
  std::atomic<bool> past{false};
  cq.at(clock_type::now() - 1h, [&] { past = true; });
  EXPECT_TRUE(eventually([&] { return past.load(); }));
}

// Without a runtime argument: the calling worker's runtime, else the default one.
TEST(ConcurrentQueue, DefaultQueueIsTheCallersRuntime) {
  watchdog dog("ConcurrentQueue.DefaultQueueIsTheCallersRuntime", 60s);
  heddle::runtime rt(2);
  auto f = rt.task([&] {
    return heddle::dispatch_detail::access::core_of(concurrent_queue()) == heddle::core_detail::access::core_of(rt);
  });
  EXPECT_TRUE(*f);
  EXPECT_EQ(heddle::dispatch_detail::access::core_of(concurrent_queue()),
            heddle::core_detail::access::core_of(heddle::default_runtime()));
  EXPECT_EQ(heddle::dispatch_detail::access::core_of(concurrent_queue(rt)), heddle::core_detail::access::core_of(rt));
  std::atomic<bool> on_rt{false};
  auto g = rt.task([&] { concurrent_queue().async([&] { on_rt = heddle_test::on_worker_of(rt); }); });
  g.get();
  EXPECT_TRUE(eventually([&] { return on_rt.load(); }));
}

// A stopping runtime discards items that never started and pending after() items: they never run
// and what they captured is destroyed.
TEST(ConcurrentQueue, ShutdownDiscardsPendingItems) {
  watchdog dog("ConcurrentQueue.ShutdownDiscardsPendingItems", 60s);
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  auto rt = std::make_unique<heddle::runtime>(1);
  heddle::core_detail::runtime_core* core = heddle::core_detail::access::core_of(*rt);
  std::atomic<bool> holding{false};
  auto holder = rt->task([&] {
    holding = true;
    while (!heddle::core_detail::core_stopping(core)) std::this_thread::sleep_for(100us);
  });
  ASSERT_TRUE(eventually([&] { return holding.load(); }));
  concurrent_queue cq(*rt);
  for (int i = 0; i < 50; ++i) cq.async([&ran, t = heddle_test::tracked(live)] { ran++; });
  for (int i = 0; i < 10; ++i) cq.after(1h, [&ran, t = heddle_test::tracked(live)] { ran++; });
  std::string sync_outcome;
  std::thread caller([&] {
    try {
      cq.sync([&] { ran++; });
      sync_outcome = "returned";
    } catch (const heddle::task_cancelled&) {
      sync_outcome = "task_cancelled";
    }
  });
  std::this_thread::sleep_for(20ms);
  {
    watchdog inner("destroying a runtime with concurrent queue items pending", 30s);
    rt.reset();
  }
  caller.join();
  holder.get();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(live->load(), 0);
  EXPECT_EQ(sync_outcome, "task_cancelled");
}

TEST(ConcurrentQueueDeathTest, AsyncExceptionTerminatesWithAReport) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        alarm(heddle_test::sanitized ? 120 : 30);
        heddle::runtime rt(1);
        concurrent_queue(rt).async([] { throw std::runtime_error("concurrent boom"); });
        for (;;) std::this_thread::sleep_for(1s);
      },
      "the concurrent queue threw.*concurrent boom");
}

}  // namespace
