// SPDX-License-Identifier: Apache-2.0
// co_await q.schedule(): a coroutine goes on as an item of a serial queue, exclusive with the
// queue's other items (coroutines and q.async items together, checked on a counter that only the
// queue touches), in order with them, up to its next suspension; schedule(rt) moves it between
// runtimes; a queue that never runs the item (suspended and dropped, a stopped runtime) destroys
// the coroutine's chain.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/dispatch.hpp>
#include <heddle/heddle.hpp>

#include "dispatch_test_support.hpp"
#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::watchdog;

struct shared_counts {
  long plain = 0;  // touched only inside the queue: no atomics needed if the queue excludes
  heddle_test::exclusion inside;
  std::atomic<int> not_current{0};
};

// Increments inside the queue, leaves it at a sleep, comes back and increments again.
heddle::co_task<int> bumps_inside(heddle::serial_queue q, shared_counts* c, int times) {
  for (int i = 0; i < times; ++i) {
    co_await q.schedule();
    {
      heddle_test::exclusion::scope in(c->inside);
      if (!q.is_current()) c->not_current.fetch_add(1);
      c->plain++;
    }
    if (i % 4 == 0) co_await heddle::sleep_for(100us);  // leaves the queue: runs where the timer resumes it
  }
  co_return times;
}

TEST(CoroutineSchedule, CoroutinesAndItemsOfOneQueueNeverOverlap) {
  watchdog dog("CoroutineSchedule.CoroutinesAndItemsOfOneQueueNeverOverlap", 120s);
  heddle::runtime rt(2);
  heddle::serial_queue q(rt, "counter");
  shared_counts c;
  const int coroutines = scaled(200, 40), times = 20, items = scaled(4000, 800);
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < coroutines; ++i) fs.push_back(rt.spawn(bumps_inside(q, &c, times)));
  for (int i = 0; i < items; ++i)
    q.async([&c] {
      heddle_test::exclusion::scope in(c.inside);
      c.plain++;
    });
  long total = 0;
  for (auto& f : fs) total += f.get();
  EXPECT_EQ(q.sync([&c] { return c.plain; }), total + items);
  EXPECT_EQ(c.inside.overlaps(), 0);
  EXPECT_EQ(c.not_current.load(), 0);
}

// Alternates q.async items and its own parts as items of q: per producer, the queue runs them in
// the order they were enqueued.
heddle::co_task<void> alternates(heddle::serial_queue q, std::vector<std::pair<int, int>>* seen, int id, int steps) {
  for (int k = 0; k < steps; ++k) {
    if (k % 2 == 0) {
      q.async([seen, id, k] { seen->emplace_back(id, k); });
    } else {
      co_await q.schedule();
      seen->emplace_back(id, k);
    }
  }
}

TEST(CoroutineSchedule, TheCoroutinesPartsKeepTheirPlaceAmongItsItems) {
  watchdog dog("CoroutineSchedule.TheCoroutinesPartsKeepTheirPlaceAmongItsItems", 60s);
  heddle::runtime rt(2);
  heddle::serial_queue q(rt, "order");
  const int producers = scaled(100, 20), steps = 40;
  std::vector<std::pair<int, int>> seen;
  std::vector<heddle::future<void>> fs;
  for (int id = 0; id < producers; ++id) fs.push_back(rt.spawn(alternates(q, &seen, id, steps)));
  for (auto& f : fs) f.get();
  q.sync([] {});  // the last async items ran
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(producers * steps));
  std::vector<int> next(producers, 0);
  int out_of_order = 0;
  for (auto [id, k] : seen) out_of_order += k != next[id]++;
  EXPECT_EQ(out_of_order, 0);
}

heddle::co_task<int> hops(heddle::runtime* a, heddle::runtime* b, std::atomic<int>* wrong) {
  int sum = 0;
  for (int i = 0; i < 50; ++i) {
    heddle::runtime* to = i % 2 ? a : b;
    co_await heddle::schedule(*to);
    if (heddle::this_worker::runtime() != to) wrong->fetch_add(1);
    sum += i;
  }
  co_return sum;
}

TEST(CoroutineSchedule, ScheduleMovesACoroutineBetweenRuntimes) {
  heddle::runtime a(1), b(1);
  std::atomic<int> wrong{0};
  EXPECT_EQ(a.spawn(hops(&a, &b, &wrong)).get(), 49 * 50 / 2);
  EXPECT_EQ(wrong.load(), 0);
}

// Holds no handle of the queue (one in its frame would keep a dropped queue alive).
heddle::co_task<int> waits_for_queue(heddle::serial_queue* q, std::atomic<long>* alive, std::atomic<int>* ran) {
  heddle_test::alive_counter here(alive);
  co_await q->schedule();
  ran->fetch_add(1);
  co_return 1;
}

TEST(CoroutineSchedule, AnItemThatNeverRunsDestroysTheCoroutine) {
  watchdog dog("CoroutineSchedule.AnItemThatNeverRunsDestroysTheCoroutine", 60s);
  std::atomic<long> alive{0};
  std::atomic<int> ran{0};
  std::atomic<bool> release{false};
  std::thread releaser;
  const int n = scaled(200, 50);
  std::vector<heddle::future<int>> fs;
  {
    heddle::runtime rt(2);
    {
      // A suspended queue whose last handle goes: its items (these coroutines' parts) are discarded.
      heddle::serial_queue q(rt, "dropped");
      q.suspend();
      for (int i = 0; i < n; ++i) fs.push_back(rt.spawn(waits_for_queue(&q, &alive, &ran)));
      while (alive.load() != n) std::this_thread::yield();
      std::this_thread::sleep_for(10ms);  // each has enqueued its item (the live count comes just before)
    }
    for (auto& f : fs) EXPECT_THROW(f.get(), heddle::task_cancelled);
    EXPECT_EQ(alive.load(), 0);
    fs.clear();
    // A queue of a runtime that stops with the coroutines' items pending behind a long item.
    heddle::serial_queue busy(rt, "busy");
    busy.async([&release] {
      while (!release.load()) std::this_thread::sleep_for(1ms);
    });
    for (int i = 0; i < n; ++i) fs.push_back(rt.spawn(waits_for_queue(&busy, &alive, &ran)));
    while (alive.load() != n) std::this_thread::yield();
    // The runtime stops while the long item runs: its destructor waits for the worker, which the
    // releaser frees; the coroutines' items behind it are then discarded, or ran before the stop.
    releaser = std::thread([&release] {
      std::this_thread::sleep_for(20ms);
      release = true;
    });
  }
  releaser.join();
  long values = 0, cancelled = 0;
  for (auto& f : fs) {
    try {
      values += f.get();
    } catch (const heddle::task_cancelled&) {
      ++cancelled;
    }
  }
  EXPECT_EQ(values + cancelled, n);
  EXPECT_EQ(values, ran.load());
  EXPECT_EQ(alive.load(), 0);
}

}  // namespace
