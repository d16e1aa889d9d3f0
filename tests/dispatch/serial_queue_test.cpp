// SPDX-License-Identifier: Apache-2.0
// heddle::serial_queue: FIFO order and mutual exclusion under many producers (workers and foreign
// threads), sync() (values, exceptions, the inline path, a busy queue, the deadlock cases),
// suspend/resume, after()/at(), the error handler and the default report, is_current(), target
// queues, high priority, labels, handles and lifetime, and the runtime's shutdown with items
// pending.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
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
using heddle::serial_queue;
using heddle_test::eventually;
using heddle_test::exclusion;
using heddle_test::gate;
using heddle_test::order_check;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::what_of;

// ---------------------------------------------------------------------------------------------
// FIFO order and mutual exclusion

TEST(SerialQueue, RunsItemsInSubmissionOrder) {
  watchdog dog("SerialQueue.RunsItemsInSubmissionOrder", 60s);
  heddle::runtime rt(4);
  serial_queue q(rt, "order");
  const int n = scaled(20000, 3000);
  std::vector<int> seen;  // touched only by the queue's items
  for (int i = 0; i < n; ++i) q.async([&seen, i] { seen.push_back(i); });
  const std::vector<int> got = q.sync([&] { return seen; });
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], i);
}

// Each producer's items run in its order, no two items overlap, none is lost or run twice.
// `inside` counts overlaps; the order check uses plain integers, so TSan sees any missing
// happens-before between consecutive items.
TEST(SerialQueue, FifoAndExclusionWithForeignProducers) {
  watchdog dog("SerialQueue.FifoAndExclusionWithForeignProducers", 120s);
  heddle::runtime rt(4);
  serial_queue q(rt, "foreign-producers");
  const int producers = 6;
  const long per = scaled(20000L, 2000L);
  exclusion inside;
  order_check order(producers);
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (long i = 0; i < per; ++i)
        q.async([&, p, i] {
          exclusion::scope s(inside);
          order.see(p, i);
          if (i % 64 == 0) heddle_test::spin_work(200);
        });
    });
  for (auto& t : threads) t.join();
  const long total = q.sync([&] { return order.total(); });
  EXPECT_EQ(total, producers * per);
  EXPECT_EQ(q.sync([&] { return order.errors(); }), "");
  for (int p = 0; p < producers; ++p) EXPECT_EQ(q.sync([&] { return order.next(p); }), per) << p;
  EXPECT_EQ(inside.overlaps(), 0);
}

TEST(SerialQueue, FifoAndExclusionWithProducersOnWorkers) {
  watchdog dog("SerialQueue.FifoAndExclusionWithProducersOnWorkers", 120s);
  heddle::runtime rt(4);
  serial_queue q(rt, "worker-producers");
  const int producers = 16;
  const long per = scaled(5000L, 500L);
  exclusion inside;
  order_check order(producers);
  // parallel_for: one producer per piece.
  heddle::parallel_for(
      0, producers / 2,
      [&](int p) {
        for (long i = 0; i < per; ++i)
          q.async([&, p, i] {
            exclusion::scope s(inside);
            order.see(p, i);
          });
      },
      1);
  // Tasks, racing with each other.
  std::vector<heddle::future<void>> fs;
  for (int p = producers / 2; p < producers; ++p)
    fs.push_back(rt.task([&, p] {
      for (long i = 0; i < per; ++i)
        q.async([&, p, i] {
          exclusion::scope s(inside);
          order.see(p, i);
        });
    }));
  for (auto& f : fs) f.get();
  EXPECT_EQ(q.sync([&] { return order.total(); }), producers * per);
  EXPECT_EQ(q.sync([&] { return order.errors(); }), "");
  EXPECT_EQ(inside.overlaps(), 0);
}

// Producers that are items of other queues, and producers mixing async with sync.
TEST(SerialQueue, FifoWithProducersOnOtherQueuesAndSyncInBetween) {
  watchdog dog("SerialQueue.FifoWithProducersOnOtherQueuesAndSyncInBetween", 120s);
  heddle::runtime rt(4);
  serial_queue q(rt, "mixed");
  const int producers = 4;
  const long per = scaled(4000L, 400L);
  exclusion inside;
  order_check order(producers);
  std::vector<serial_queue> sources;
  for (int p = 0; p < producers; ++p) sources.emplace_back(rt, "source-" + std::to_string(p));
  std::atomic<long> sync_mismatches{0};
  heddle::group done;
  for (int p = 0; p < producers; ++p)
    done.async(sources[p], [&, p] {
      for (long i = 0; i < per; ++i) {
        if (i % 100 == 99) {
          // A sync in the middle of the stream runs after this producer's earlier items.
          const long seen = q.sync([&] {
            exclusion::scope s(inside);
            order.see(p, i);
            return order.next(p);
          });
          if (seen != i + 1) sync_mismatches++;
        } else {
          q.async([&, p, i] {
            exclusion::scope s(inside);
            order.see(p, i);
          });
        }
      }
    });
  done.wait();
  EXPECT_EQ(q.sync([&] { return order.total(); }), producers * per);
  EXPECT_EQ(q.sync([&] { return order.errors(); }), "");
  EXPECT_EQ(sync_mismatches.load(), 0);
  EXPECT_EQ(inside.overlaps(), 0);
}

// ---------------------------------------------------------------------------------------------
// sync

TEST(SerialQueueSync, ReturnsValuesFromForeignThreads) {
  watchdog dog("SerialQueueSync.ReturnsValuesFromForeignThreads", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "values");
  EXPECT_EQ(q.sync([] { return 42; }), 42);
  EXPECT_EQ(q.sync([] { return std::string(1000, 'x'); }), std::string(1000, 'x'));
  std::unique_ptr<int> p = q.sync([] { return std::make_unique<int>(7); });
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 7);
  int counter = 0;
  q.sync([&] { counter = 5; });  // void
  EXPECT_EQ(counter, 5);
  // A reference result is returned by value.
  std::string s = "kept";
  auto copy = q.sync([&]() -> std::string& { return s; });
  static_assert(std::is_same_v<decltype(copy), std::string>);
  EXPECT_EQ(copy, "kept");
  // From several threads at once, with items in between.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  long shared = 0;  // the queue's state
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < scaled(2000, 300); ++i) {
        q.async([&] { ++shared; });
        const long v = q.sync([&] { return ++shared; });
        if (v <= 0) wrong++;
        if (q.sync([t, i] { return t * 100000 + i; }) != t * 100000 + i) wrong++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(q.sync([&] { return shared; }), 4L * 2 * scaled(2000, 300));
}

TEST(SerialQueueSync, ReturnsValuesOnWorkers) {
  watchdog dog("SerialQueueSync.ReturnsValuesOnWorkers", 60s);
  heddle::runtime rt(4);
  serial_queue q(rt, "values-on-workers");
  const int n = scaled(2000, 300);
  long state = 0;
  std::vector<long> results(n);
  heddle::parallel_for(0, n, [&](int i) {
    q.async([&] { state += 1; });
    results[i] = q.sync([&, i] {
      state += 1;
      return static_cast<long>(i) * 3;
    });
  });
  for (int i = 0; i < n; ++i) ASSERT_EQ(results[i], i * 3L);
  EXPECT_EQ(q.sync([&] { return state; }), 2L * n);
  // From a task, nested in other tasks.
  auto f = rt.task([&] {
    auto inner = heddle::task([&] { return q.sync([] { return 9; }); });
    return q.sync([] { return 1; }) + *inner;
  });
  EXPECT_EQ(*f, 10);
}

TEST(SerialQueueSync, PropagatesExceptions) {
  watchdog dog("SerialQueueSync.PropagatesExceptions", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "throws");
  // Idle queue (inline path).
  EXPECT_EQ(what_of<std::runtime_error>([&] { q.sync([]() -> int { throw std::runtime_error("inline boom"); }); }),
            "inline boom");
  // Busy queue (the item runs on a worker).
  gate g;
  q.async([&] { g.wait(); });
  std::thread opener([&] {
    std::this_thread::sleep_for(10ms);
    g.open();
  });
  EXPECT_EQ(what_of<std::runtime_error>([&] { q.sync([]() -> int { throw std::runtime_error("queued boom"); }); }),
            "queued boom");
  opener.join();
  // From a worker.
  auto f = rt.task([&] {
    return what_of<std::out_of_range>([&] { q.sync([] { throw std::out_of_range("worker boom"); }); });
  });
  EXPECT_EQ(*f, "worker boom");
  // Not a std::exception.
  bool caught = false;
  try {
    q.sync([] { throw 17; });
  } catch (int v) {
    caught = v == 17;
  }
  EXPECT_TRUE(caught);
  // The queue goes on.
  EXPECT_EQ(q.sync([] { return 3; }), 3);
}

// An idle queue runs the function on the caller's thread, inside the queue.
TEST(SerialQueueSync, OnAnIdleQueueRunsInline) {
  watchdog dog("SerialQueueSync.OnAnIdleQueueRunsInline", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "idle");
  const auto before = rt.stats();
  const auto me = std::this_thread::get_id();
  std::thread::id ran_on;
  bool current = false;
  q.sync([&] {
    ran_on = std::this_thread::get_id();
    current = q.is_current();
  });
  EXPECT_EQ(ran_on, me);
  EXPECT_TRUE(current);
  EXPECT_FALSE(q.is_current());
  const auto after = rt.stats();
  EXPECT_EQ(after.injected, before.injected);  // no task
  // On a worker too.
  auto f = rt.task([&] {
    const auto worker = std::this_thread::get_id();
    return q.sync([&] { return std::this_thread::get_id() == worker && q.is_current(); });
  });
  EXPECT_TRUE(*f);
  // Items that arrive while the inline function runs run after it.
  std::vector<int> seen;
  std::atomic<bool> inside{false};
  std::thread producer;
  q.sync([&] {
    seen.push_back(0);
    producer = std::thread([&] {
      while (!inside.load()) std::this_thread::yield();
      for (int i = 1; i <= 10; ++i) q.async([&seen, i] { seen.push_back(i); });
    });
    inside = true;
    std::this_thread::sleep_for(20ms);  // the producer enqueues meanwhile
  });
  producer.join();
  const auto got = q.sync([&] { return seen; });
  ASSERT_EQ(got.size(), 11u);
  for (int i = 0; i <= 10; ++i) EXPECT_EQ(got[i], i);
}

// A busy queue: the function waits for the items before it and runs on a worker.
TEST(SerialQueueSync, OnABusyQueueWaitsForEarlierItems) {
  watchdog dog("SerialQueueSync.OnABusyQueueWaitsForEarlierItems", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "busy");
  gate g;
  std::vector<int> seen;
  q.async([&] {
    g.wait();
    seen.push_back(0);
  });
  for (int i = 1; i <= 5; ++i) q.async([&seen, i] { seen.push_back(i); });
  std::atomic<bool> returned{false};
  std::thread::id ran_on;
  std::vector<int> seen_by_sync;
  std::thread caller([&] {
    seen_by_sync = q.sync([&] {
      ran_on = std::this_thread::get_id();
      return seen;
    });
    returned = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(returned.load());  // still waiting behind the held item
  const auto caller_id = caller.get_id();
  g.open();
  caller.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(seen_by_sync, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_NE(ran_on, caller_id);
}

// The same from workers: many tasks sync on a busy queue while helping.
TEST(SerialQueueSync, FromWorkersOnABusyQueue) {
  watchdog dog("SerialQueueSync.FromWorkersOnABusyQueue", 60s);
  heddle::runtime rt(3);
  serial_queue q(rt, "busy-workers");
  gate g;
  q.async([&] { g.wait(); });
  long state = 0;
  std::vector<heddle::future<long>> fs;
  for (int i = 0; i < 20; ++i)
    fs.push_back(rt.task([&, i] {
      return q.sync([&, i] {
        state += i;
        return state;
      });
    }));
  std::this_thread::sleep_for(20ms);
  for (auto& f : fs) EXPECT_FALSE(f.is_ready());
  g.open();
  long max = 0;
  for (auto& f : fs) max = std::max(max, *f);
  EXPECT_EQ(max, 190);  // the last of the 20 saw every addition
  EXPECT_EQ(q.sync([&] { return state; }), 190);
}

// ---------------------------------------------------------------------------------------------
// The deadlock cases: sync() that would wait for itself throws queue_deadlock naming the queues.

TEST(SerialQueueDeadlock, SyncFromAnItemOfTheQueue) {
  watchdog dog("SerialQueueDeadlock.SyncFromAnItemOfTheQueue", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "self-sync");
  std::string message;
  bool returned = false;
  q.async([&] {
    message = what_of<heddle::queue_deadlock>([&] {
      q.sync([] {});
      returned = true;
    });
  });
  q.sync([] {});  // after the item
  EXPECT_FALSE(returned);
  EXPECT_NE(message.find("'self-sync'"), std::string::npos) << message;
  // A queue_deadlock is a std::logic_error.
  std::string via_base;
  q.async([&] { via_base = what_of<std::logic_error>([&] { q.sync([] { return 1; }); }); });
  q.sync([] {});
  EXPECT_NE(via_base.find("self-sync"), std::string::npos);
  // From the inline path of sync itself.
  const std::string nested = q.sync([&] { return what_of<heddle::queue_deadlock>([&] { q.sync([] {}); }); });
  EXPECT_NE(nested.find("'self-sync'"), std::string::npos) << nested;
  // The queue still works, inline and queued.
  EXPECT_EQ(q.sync([] { return 1; }), 1);
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) q.async([&] { ran++; });
  q.sync([] {});
  EXPECT_EQ(ran.load(), 10);
}

// From an item of a queue that targets q: the item runs inside q.
TEST(SerialQueueDeadlock, SyncOnTheTargetFromAnItemOfAChild) {
  watchdog dog("SerialQueueDeadlock.SyncOnTheTargetFromAnItemOfAChild", 60s);
  heddle::runtime rt(2);
  serial_queue target(rt, "the-target");
  serial_queue child("the-child", target);
  std::string message;
  child.async([&] { message = what_of<heddle::queue_deadlock>([&] { target.sync([] {}); }); });
  child.sync([] {});
  EXPECT_NE(message.find("'the-target'"), std::string::npos) << message;
  // Two levels down.
  serial_queue grandchild("the-grandchild", child);
  std::string deep;
  grandchild.async([&] { deep = what_of<heddle::queue_deadlock>([&] { target.sync([] {}); }); });
  grandchild.sync([] {});
  EXPECT_NE(deep.find("'the-target'"), std::string::npos) << deep;
  EXPECT_EQ(target.sync([] { return 2; }), 2);
}

// From an item of q's target, syncing the child: the child's items would have to run inside the
// target, which is busy with the caller.
TEST(SerialQueueDeadlock, SyncOnAChildFromAnItemOfItsTarget) {
  watchdog dog("SerialQueueDeadlock.SyncOnAChildFromAnItemOfItsTarget", 60s);
  heddle::runtime rt(2);
  serial_queue target(rt, "outer-target");
  serial_queue child("inner-child", target);
  serial_queue sibling("other-child", target);
  std::string message, from_sibling, from_inline;
  target.async([&] { message = what_of<heddle::queue_deadlock>([&] { child.sync([] {}); }); });
  target.sync([] {});
  EXPECT_NE(message.find("'inner-child'"), std::string::npos) << message;
  EXPECT_NE(message.find("'outer-target'"), std::string::npos) << message;
  // A sibling: both run inside the target.
  sibling.async([&] { from_sibling = what_of<heddle::queue_deadlock>([&] { child.sync([] {}); }); });
  sibling.sync([] {});
  EXPECT_NE(from_sibling.find("'inner-child'"), std::string::npos) << from_sibling;
  // From the target's inline sync.
  from_inline = target.sync([&] { return what_of<heddle::queue_deadlock>([&] { child.sync([] {}); }); });
  EXPECT_NE(from_inline.find("'inner-child'"), std::string::npos) << from_inline;
  EXPECT_EQ(child.sync([] { return 4; }), 4);
}

// Unrelated queues may sync on each other from items; an unlabelled queue is named as such.
TEST(SerialQueueDeadlock, SyncOnAnotherQueueIsAllowed) {
  watchdog dog("SerialQueueDeadlock.SyncOnAnotherQueueIsAllowed", 60s);
  heddle::runtime rt(2);
  serial_queue a(rt, "a"), b(rt, "b");
  serial_queue anonymous(rt);
  int v = 0;
  a.async([&] { v = b.sync([&] { return anonymous.sync([] { return 5; }) + 1; }); });
  a.sync([] {});
  EXPECT_EQ(v, 6);
  // d inside c inside d, all on this thread (both idle, so both run inline): d waits for itself.
  serial_queue c(rt, "c"), d(rt, "d");
  const std::string m = d.sync([&] {
    return c.sync([&] { return what_of<heddle::queue_deadlock>([&] { d.sync([] {}); }); });
  });
  EXPECT_NE(m.find("'d'"), std::string::npos) << m;
  const std::string unnamed = anonymous.sync([&] {
    return what_of<heddle::queue_deadlock>([&] { anonymous.sync([] {}); });
  });
  EXPECT_NE(unnamed.find("unlabelled"), std::string::npos) << unnamed;
}

// ---------------------------------------------------------------------------------------------
// suspend / resume

TEST(SerialQueueSuspend, ItemsWaitUntilResumed) {
  watchdog dog("SerialQueueSuspend.ItemsWaitUntilResumed", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "suspended");
  q.suspend();
  std::vector<int> seen;
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i)
    q.async([&, i] {
      seen.push_back(i);
      ran++;
    });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(ran.load(), 0);
  q.resume();
  EXPECT_TRUE(eventually([&] { return ran.load() == 100; }));
  const auto got = q.sync([&] { return seen; });
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], i);
}

TEST(SerialQueueSuspend, NestedSuspendsNeedAsManyResumes) {
  watchdog dog("SerialQueueSuspend.NestedSuspendsNeedAsManyResumes", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "nested");
  std::atomic<int> ran{0};
  q.suspend();
  q.suspend();
  for (int i = 0; i < 10; ++i) q.async([&] { ran++; });
  q.resume();
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(ran.load(), 0);
  q.resume();
  EXPECT_TRUE(eventually([&] { return ran.load() == 10; }));
  // Balanced again: one more resume is an error, and the queue keeps working.
  EXPECT_THROW(q.resume(), std::logic_error);
  q.async([&] { ran++; });
  EXPECT_EQ(q.sync([&] { return ran.load(); }), 11);
}

TEST(SerialQueueSuspend, ResumeWithoutSuspendThrows) {
  heddle::runtime rt(1);
  serial_queue q(rt, "never-suspended");
  const std::string m = what_of<std::logic_error>([&] { q.resume(); });
  EXPECT_NE(m.find("never-suspended"), std::string::npos) << m;
  q.suspend();
  q.resume();
  EXPECT_THROW(q.resume(), std::logic_error);
  EXPECT_EQ(q.sync([] { return 1; }), 1);
}

// suspend() from an item takes effect after that item: the next ones wait.
TEST(SerialQueueSuspend, FromAnItemStopsAfterIt) {
  watchdog dog("SerialQueueSuspend.FromAnItemStopsAfterIt", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "self-suspending");
  std::atomic<int> ran{0};
  q.async([&] {
    q.suspend();
    ran++;
  });
  for (int i = 0; i < 5; ++i) q.async([&] { ran++; });
  EXPECT_TRUE(eventually([&] { return ran.load() >= 1; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(ran.load(), 1);
  q.resume();
  EXPECT_TRUE(eventually([&] { return ran.load() == 6; }));
}

// A sync caller waits while the queue is suspended (no inline run), then gets its value.
TEST(SerialQueueSuspend, SyncWaitsForResume) {
  watchdog dog("SerialQueueSuspend.SyncWaitsForResume", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "sync-suspended");
  q.suspend();
  std::atomic<bool> returned{false};
  int v = 0;
  std::thread caller([&] {
    v = q.sync([] { return 8; });
    returned = true;
  });
  auto worker_call = rt.task([&] { return q.sync([] { return 9; }); });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(returned.load());
  EXPECT_FALSE(worker_call.is_ready());
  q.resume();
  caller.join();
  EXPECT_EQ(v, 8);
  EXPECT_EQ(*worker_call, 9);
}

// Suspending a target holds its children too.
TEST(SerialQueueSuspend, SuspendingTheTargetHoldsItsChildren) {
  watchdog dog("SerialQueueSuspend.SuspendingTheTargetHoldsItsChildren", 60s);
  heddle::runtime rt(2);
  serial_queue target(rt, "held-target");
  serial_queue child("held-child", target);
  std::atomic<int> ran{0};
  target.suspend();
  for (int i = 0; i < 10; ++i) child.async([&] { ran++; });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(ran.load(), 0);
  target.resume();
  EXPECT_TRUE(eventually([&] { return ran.load() == 10; }));
  // Suspending the child alone does not hold the target.
  child.suspend();
  child.async([&] { ran++; });
  EXPECT_EQ(target.sync([] { return 1; }), 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ran.load(), 10);
  child.resume();
  EXPECT_EQ(child.sync([&] { return ran.load(); }), 11);
}

// Suspend and resume toggled from another thread while producers run: order and exclusion hold.
TEST(SerialQueueSuspend, TogglingWhileProducersRun) {
  watchdog dog("SerialQueueSuspend.TogglingWhileProducersRun", 120s);
  heddle::runtime rt(4);
  serial_queue q(rt, "toggled");
  const int producers = 3;
  const long per = scaled(10000L, 1000L);
  exclusion inside;
  order_check order(producers);
  std::atomic<bool> stop{false};
  std::thread toggler([&] {
    while (!stop.load()) {
      q.suspend();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      q.resume();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (long i = 0; i < per; ++i)
        q.async([&, p, i] {
          exclusion::scope s(inside);
          order.see(p, i);
        });
    });
  for (auto& t : threads) t.join();
  stop = true;
  toggler.join();
  EXPECT_EQ(q.sync([&] { return order.total(); }), producers * per);
  EXPECT_EQ(q.sync([&] { return order.errors(); }), "");
  EXPECT_EQ(inside.overlaps(), 0);
}

// ---------------------------------------------------------------------------------------------
// batches: a busy queue gives its worker up between batches only when other work waits

// One worker, a long backlog on q, and a task submitted while q drains: the task runs before the
// backlog is done.
TEST(SerialQueueBatches, OtherWorkRunsBetweenBatches) {
  watchdog dog("SerialQueueBatches.OtherWorkRunsBetweenBatches", 60s);
  heddle::runtime rt(1);
  serial_queue q(rt, "backlog");
  const long backlog = 10000;
  long ran = 0;  // the queue's items only
  gate held;
  q.async([&] {
    held.wait();  // the drain owns q and the only worker until the task is queued
    ++ran;
  });
  for (long i = 1; i < backlog; ++i) q.async([&] { ++ran; });
  std::atomic<long> seen_by_task{-1};
  auto task = rt.task([&] { seen_by_task = ran; });  // on the same worker, between two batches
  held.open();
  task.get();
  EXPECT_EQ(q.sync([&] { return ran; }), backlog);
  EXPECT_GE(seen_by_task.load(), 1);
  EXPECT_LT(seen_by_task.load(), backlog);
}

// With nothing else to run, one drain task runs the whole backlog: the queue is not passed from
// worker to worker (or round the injection queue) every batch.
TEST(SerialQueueBatches, ABusyQueueKeepsItsWorkerWhenNothingElseWaits) {
  watchdog dog("SerialQueueBatches.ABusyQueueKeepsItsWorkerWhenNothingElseWaits", 60s);
  heddle::runtime rt(1);
  serial_queue q(rt, "backlog");
  // Watched with an atomic rather than q.sync: a sync item arriving just as the drain finds the
  // queue empty would legitimately start a second drain task and be counted here.
  std::atomic<long> ran{0};
  q.suspend();  // the backlog is queued before any drain task exists
  for (int i = 0; i < 10000; ++i) q.async([&] { ran.fetch_add(1, std::memory_order_relaxed); });
  const std::uint64_t before = rt.stats().executed;
  q.resume();
  EXPECT_TRUE(eventually([&] { return ran.load() == 10000; }));
  EXPECT_TRUE(eventually([&] { return rt.stats().executed - before >= 1; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(rt.stats().executed - before, 1u);
}

// ---------------------------------------------------------------------------------------------
// after / at

TEST(SerialQueueAfter, RunsOnTheQueueNeverEarly) {
  watchdog dog("SerialQueueAfter.RunsOnTheQueueNeverEarly", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "delayed");
  const std::vector<std::chrono::milliseconds> delays{0ms, 1ms, 5ms, 20ms, 50ms, 3ms};
  struct result {
    clock_type::time_point start, ran;
    bool current = false;
  };
  std::vector<result> results(delays.size());
  std::atomic<std::size_t> done{0};
  for (std::size_t i = 0; i < delays.size(); ++i) {
    results[i].start = clock_type::now();
    q.after(delays[i], [&, i] {
      results[i].ran = clock_type::now();
      results[i].current = q.is_current();
      done++;
    });
  }
  ASSERT_TRUE(eventually([&] { return done.load() == delays.size(); }));
  q.sync([] {});
  for (std::size_t i = 0; i < delays.size(); ++i) {
    EXPECT_GE(results[i].ran - results[i].start, delays[i]) << i;
    EXPECT_TRUE(results[i].current) << i;
  }
  // A negative delay means now.
  std::atomic<bool> ran{false};
  q.after(-5s, [&] { ran = true; });
  EXPECT_TRUE(eventually([&] { return ran.load(); }));
}

// Items due at the same deadline run in the order they were submitted; at() in the past runs soon.
TEST(SerialQueueAfter, SameDeadlineKeepsOrder) {
  watchdog dog("SerialQueueAfter.SameDeadlineKeepsOrder", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "same-deadline");
  const auto deadline = clock_type::now() + 20ms;
  std::vector<int> seen;
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i)
    q.at(deadline, [&, i] {
      seen.push_back(i);
      ran++;
    });
  ASSERT_TRUE(eventually([&] { return ran.load() == 50; }));
  EXPECT_GE(clock_type::now(), deadline);
  const auto got = q.sync([&] { return seen; });
  for (int i = 0; i < 50; ++i) EXPECT_EQ(got[i], i);
  std::atomic<bool> past{false};
  q.at(clock_type::now() - 1s, [&] { past = true; });
  EXPECT_TRUE(eventually([&] { return past.load(); }));
}

// A pending after() keeps the queue alive after its last handle is gone.
TEST(SerialQueueAfter, KeepsTheQueueAlive) {
  watchdog dog("SerialQueueAfter.KeepsTheQueueAlive", 60s);
  heddle::runtime rt(2);
  std::atomic<int> ran{0};
  std::atomic<bool> current{false};
  auto live = heddle_test::live_counter();
  {
    serial_queue q(rt, "dropped-with-timer");
    q.after(20ms, [&, t = heddle_test::tracked(live)] {
      current = heddle::dispatch_detail::current_queue_frame != nullptr;  // inside a queue
      ran++;
    });
  }
  EXPECT_TRUE(eventually([&] { return ran.load() == 1; }));
  EXPECT_TRUE(current.load());
  EXPECT_TRUE(eventually([&] { return live->load() == 0; }));
}

// ---------------------------------------------------------------------------------------------
// Errors of async items

TEST(SerialQueueErrors, HandlerReceivesExceptionsAndTheQueueGoesOn) {
  watchdog dog("SerialQueueErrors.HandlerReceivesExceptionsAndTheQueueGoesOn", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "with-handler");
  std::vector<std::string> errors;  // touched by the handler, inside the queue
  std::vector<int> seen;
  bool handler_inside = true;
  q.set_error_handler([&](std::exception_ptr e) {
    handler_inside = handler_inside && q.is_current();
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      errors.push_back(x.what());
    } catch (...) {
      errors.push_back("?");
    }
  });
  for (int i = 0; i < 20; ++i)
    q.async([&, i] {
      seen.push_back(i);
      if (i % 2) throw std::runtime_error("item " + std::to_string(i));
    });
  q.async([] { throw 5; });
  const auto got_errors = q.sync([&] { return errors; });
  ASSERT_EQ(got_errors.size(), 11u);
  for (int k = 0; k < 10; ++k) EXPECT_EQ(got_errors[k], "item " + std::to_string(2 * k + 1));
  EXPECT_EQ(got_errors[10], "?");
  EXPECT_EQ(q.sync([&] { return seen.size(); }), 20u);
  EXPECT_TRUE(q.sync([&] { return handler_inside; }));
  // Replacing the handler.
  std::atomic<int> second{0};
  q.set_error_handler([&](std::exception_ptr) { second++; });
  q.async([] { throw std::runtime_error("again"); });
  q.sync([] {});
  EXPECT_EQ(second.load(), 1);
  EXPECT_EQ(q.sync([&] { return errors.size(); }), 11u);
  // sync() exceptions go to the caller, not to the handler.
  EXPECT_THROW(q.sync([] { throw std::runtime_error("to the caller"); }), std::runtime_error);
  EXPECT_EQ(second.load(), 1);
}

// A child's exceptions go to the child's own handler.
TEST(SerialQueueErrors, ChildUsesItsOwnHandler) {
  watchdog dog("SerialQueueErrors.ChildUsesItsOwnHandler", 60s);
  heddle::runtime rt(2);
  serial_queue target(rt, "handler-target");
  serial_queue child("handler-child", target);
  std::atomic<int> target_errors{0}, child_errors{0};
  target.set_error_handler([&](std::exception_ptr) { target_errors++; });
  child.set_error_handler([&](std::exception_ptr) { child_errors++; });
  child.async([] { throw std::runtime_error("child"); });
  target.async([] { throw std::runtime_error("target"); });
  target.async([] { throw std::runtime_error("target"); });
  child.sync([] {});
  target.sync([] {});
  EXPECT_EQ(child_errors.load(), 1);
  EXPECT_EQ(target_errors.load(), 2);
}

class SerialQueueDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SerialQueueDeathTest, DefaultHandlerReportsTheLabelAndTerminates) {
  EXPECT_DEATH(
      {
        alarm(heddle_test::sanitized ? 120 : 30);
        heddle::runtime rt(1);
        serial_queue q(rt, "doomed-queue");
        q.async([] { throw std::runtime_error("boom from the item"); });
        for (;;) std::this_thread::sleep_for(1s);
      },
      "heddle: fatal: heddle::serial_queue: an item of serial queue 'doomed-queue' threw, and the queue has no error "
      "handler: boom from the item");
}

TEST_F(SerialQueueDeathTest, DefaultHandlerOfAnUnlabelledQueue) {
  EXPECT_DEATH(
      {
        alarm(heddle_test::sanitized ? 120 : 30);
        heddle::runtime rt(1);
        serial_queue q(rt);
        q.async([] { throw std::runtime_error("anonymous boom"); });
        for (;;) std::this_thread::sleep_for(1s);
      },
      "unlabelled serial queue threw.*anonymous boom");
}

TEST_F(SerialQueueDeathTest, AThrowingErrorHandlerTerminates) {
  EXPECT_DEATH(
      {
        alarm(heddle_test::sanitized ? 120 : 30);
        heddle::runtime rt(1);
        serial_queue q(rt, "bad-handler");
        q.set_error_handler([](std::exception_ptr) { throw std::logic_error("handler failed"); });
        q.async([] { throw std::runtime_error("item failed"); });
        for (;;) std::this_thread::sleep_for(1s);
      },
      "heddle: fatal: heddle::serial_queue: the error handler of serial queue 'bad-handler' threw: handler failed");
}

// ---------------------------------------------------------------------------------------------
// is_current

TEST(SerialQueue, IsCurrentOnlyInsideTheQueue) {
  watchdog dog("SerialQueue.IsCurrentOnlyInsideTheQueue", 60s);
  heddle::runtime rt(2);
  serial_queue a(rt, "a"), b(rt, "b");
  serial_queue child("child-of-a", a);
  EXPECT_FALSE(a.is_current());
  struct seen {
    bool a, b, child;
  };
  auto look = [&] { return seen{a.is_current(), b.is_current(), child.is_current()}; };
  seen in_a{}, in_b{}, in_child{}, in_b_in_a{};
  bool in_fresh_in_a = false;
  serial_queue fresh(rt, "fresh");
  // One queue at a time, so that no item waits in sync() while another is pending (a worker that
  // waits may run the awaited queue's items: see TakeoverWhileWaitingInsideAnItem below).
  a.async([&] { in_a = look(); });
  a.sync([] {});
  b.async([&] { in_b = look(); });
  b.sync([] {});
  child.async([&] { in_child = look(); });
  child.sync([] {});
  a.async([&] { in_b_in_a = b.sync(look); });
  // An idle queue's sync runs inline, on the thread that is inside a.
  a.async([&] { in_fresh_in_a = fresh.sync([&] { return fresh.is_current() && a.is_current(); }); });
  a.sync([] {});
  EXPECT_TRUE(in_a.a);
  EXPECT_FALSE(in_a.b);
  EXPECT_FALSE(in_a.child);
  EXPECT_FALSE(in_b.a);
  EXPECT_TRUE(in_b.b);
  EXPECT_TRUE(in_child.child);
  EXPECT_TRUE(in_child.a);  // a child's items run inside its target
  EXPECT_FALSE(in_child.b);
  EXPECT_TRUE(in_b_in_a.b);  // sync from a's item: inside b (inline, or on b's worker)
  EXPECT_TRUE(in_fresh_in_a);
  auto f = rt.task([&] { return a.is_current() || b.is_current(); });
  EXPECT_FALSE(*f);
}

// An item X of queue `a` that waits in b.sync() on a worker may run b's earlier items on its own
// stack (it takes over b's pending batch, through b's target if b has one); it must not run items
// of an unrelated queue `e` there: e's item is not an item of a (a.is_current() is false in it), and
// it may sync on a (the order e -> a -> b has no cycle: on another worker, that sync just waits for
// X). With one worker the order is fixed: X waits until e's batch and then b's work are queued,
// then syncs on the busy b.
struct helping_outcome {
  int synced = 0;
  bool e_sees_a = true, e_sees_e = false, b_sees_a = true;
  std::string e_sync = "not run";
};

// `b_targets`: b is a child of an idle queue (no takeover of b's batch then: the worker helps).
helping_outcome run_helping_scenario(bool b_targets) {
  heddle::runtime rt(1);
  serial_queue a(rt, "a"), e(rt, "e"), t(rt, "t");
  serial_queue b = b_targets ? serial_queue("b", t) : serial_queue(rt, "b");
  helping_outcome o;
  gate go;
  std::atomic<bool> x_started{false};
  a.async([&] {
    x_started = true;
    go.wait();
    o.synced = b.sync([] { return 1; });
  });
  EXPECT_TRUE(eventually([&] { return x_started.load(); }));
  e.async([&] {
    o.e_sees_a = a.is_current();
    o.e_sees_e = e.is_current();
    try {
      a.sync([] {});
      o.e_sync = "returned";
    } catch (const heddle::queue_deadlock& x) {
      o.e_sync = std::string("queue_deadlock: ") + x.what();
    }
  });
  b.async([&] { o.b_sees_a = a.is_current(); });  // b is busy when X syncs on it
  go.open();
  a.sync([] {});
  e.sync([] {});
  b.sync([] {});
  return o;
}

// b targets an idle queue: the waiting worker may not help with e's batch (queued first) inside X.
TEST(SerialQueue, NoUnrelatedWorkWhileWaitingInsideAnItem) {
  watchdog dog("SerialQueue.NoUnrelatedWorkWhileWaitingInsideAnItem", 60s);
  const helping_outcome o = run_helping_scenario(true);
  EXPECT_EQ(o.synced, 1);
  EXPECT_TRUE(o.e_sees_e);
  EXPECT_FALSE(o.e_sees_a) << "an item of e reports that it runs on a";
  EXPECT_EQ(o.e_sync, "returned");
}

// The worker takes over b's pending batch: b's earlier item runs inside X.
TEST(SerialQueue, TakeoverWhileWaitingInsideAnItem) {
  watchdog dog("SerialQueue.TakeoverWhileWaitingInsideAnItem", 60s);
  const helping_outcome o = run_helping_scenario(false);
  EXPECT_EQ(o.synced, 1);
  EXPECT_TRUE(o.e_sees_e);
  EXPECT_FALSE(o.e_sees_a) << "an item of e reports that it runs on a";
  // The header's contract: the thread holds a while X waits, also while it runs b's earlier item.
  EXPECT_TRUE(o.b_sees_a) << "b's earlier item, run by X's thread while X waits, does not see a held";
  EXPECT_EQ(o.e_sync, "returned");
}

// Since the inline path lends a foreign thread to the queue's runtime, tasks and concurrent-queue
// items started by an inline function run there, not on the default runtime; a worker of another
// runtime never runs a queue's function inline.
TEST(SerialQueueSync, InlineLendsTheCallerToTheQueuesRuntime) {
  watchdog dog("SerialQueueSync.InlineLendsTheCallerToTheQueuesRuntime", 60s);
  heddle::runtime rt(2);
  heddle::runtime other(1);
  serial_queue q(rt, "lending");
  const auto me = std::this_thread::get_id();
  auto where = q.sync([&] {
    EXPECT_EQ(std::this_thread::get_id(), me);  // inline
    auto f = heddle::task([&] { return heddle_test::on_worker_of(rt); });
    return *f;
  });
  EXPECT_TRUE(where);
  EXPECT_EQ(q.sync([] { return heddle::dispatch_detail::access::core_of(heddle::concurrent_queue()); }),
            heddle::core_detail::access::core_of(rt));
  // After the call, this thread belongs to no runtime again.
  EXPECT_EQ(heddle::dispatch_detail::access::core_of(heddle::concurrent_queue()),
            heddle::core_detail::access::core_of(heddle::default_runtime()));
  // From a worker of another runtime: runs on one of rt's workers.
  auto f = other.task([&] {
    const auto worker = std::this_thread::get_id();
    return q.sync([&] { return std::this_thread::get_id() != worker && heddle_test::on_worker_of(rt); });
  });
  EXPECT_TRUE(*f);
}

// ---------------------------------------------------------------------------------------------
// Target queues

// Items of the children and of the target never overlap; each producer's items stay in order.
TEST(SerialQueueTarget, ChildrenAndTargetNeverOverlap) {
  watchdog dog("SerialQueueTarget.ChildrenAndTargetNeverOverlap", 120s);
  heddle::runtime rt(4);
  serial_queue target(rt, "root");
  serial_queue c1("c1", target), c2("c2", target);
  serial_queue grandchild("g", c1);
  std::vector<serial_queue> queues{target, c1, c2, grandchild, target, c2};
  const long per = scaled(8000L, 800L);
  exclusion inside;
  order_check order(queues.size());
  std::atomic<int> outside_target{0};
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < queues.size(); ++p)
    threads.emplace_back([&, p] {
      serial_queue q = queues[p];
      for (long i = 0; i < per; ++i)
        q.async([&, p, i] {
          exclusion::scope s(inside);
          if (!target.is_current()) outside_target++;
          order.see(p, i);
        });
    });
  for (auto& t : threads) t.join();
  for (auto& q : queues) q.sync([] {});
  EXPECT_EQ(target.sync([&] { return order.total(); }), static_cast<long>(queues.size()) * per);
  EXPECT_EQ(target.sync([&] { return order.errors(); }), "");
  EXPECT_EQ(inside.overlaps(), 0);
  EXPECT_EQ(outside_target.load(), 0);
}

// A child's sync goes through its target: it waits for the target's earlier items.
TEST(SerialQueueTarget, ChildSyncWaitsForTheTarget) {
  watchdog dog("SerialQueueTarget.ChildSyncWaitsForTheTarget", 60s);
  heddle::runtime rt(2);
  serial_queue target(rt, "busy-target");
  serial_queue child("waiting-child", target);
  gate g;
  std::atomic<bool> target_item_done{false};
  target.async([&] {
    g.wait();
    target_item_done = true;
  });
  std::atomic<bool> returned{false};
  bool saw_done = false;
  std::thread caller([&] {
    saw_done = child.sync([&] { return target_item_done.load(); });
    returned = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(returned.load());
  g.open();
  caller.join();
  EXPECT_TRUE(saw_done);
  // An idle child with an idle target: sync still works (never inline for a child).
  EXPECT_EQ(child.sync([&] { return child.is_current() && target.is_current(); }), true);
}

// ---------------------------------------------------------------------------------------------
// High priority

TEST(SerialQueue, HighPriorityQueueRunsInOrderOnTheExpressLane) {
  watchdog dog("SerialQueue.HighPriorityQueueRunsInOrderOnTheExpressLane", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "urgent", heddle::queue_priority::high);
  serial_queue child("urgent-child", q);
  const auto before = rt.stats().express;
  const int n = scaled(5000, 500);
  exclusion inside;
  order_check order(2);
  std::thread other([&] {
    for (int i = 0; i < n; ++i)
      child.async([&, i] {
        exclusion::scope s(inside);
        order.see(1, i);
      });
  });
  for (int i = 0; i < n; ++i)
    q.async([&, i] {
      exclusion::scope s(inside);
      order.see(0, i);
    });
  other.join();
  child.sync([] {});
  EXPECT_EQ(q.sync([&] { return order.total(); }), 2L * n);
  EXPECT_EQ(q.sync([&] { return order.errors(); }), "");
  EXPECT_EQ(inside.overlaps(), 0);
  EXPECT_GT(rt.stats().express, before);
  // Workers busy with a long backlog of tasks get to a high-priority queue's item between two of
  // them, long before the backlog is done.
  const int backlog = 400;
  std::atomic<int> backlog_done{0};
  std::vector<heddle::future<void>> blockers;
  for (int i = 0; i < backlog; ++i)
    blockers.push_back(rt.task([&] {
      std::this_thread::sleep_for(1ms);
      backlog_done++;
    }));
  std::atomic<int> done_when_ran{-1};
  q.async([&] { done_when_ran = backlog_done.load(); });
  for (auto& b : blockers) b.get();
  q.sync([] {});
  EXPECT_GE(done_when_ran.load(), 0);
  EXPECT_LT(done_when_ran.load(), backlog);
}

// ---------------------------------------------------------------------------------------------
// Labels and handles

TEST(SerialQueue, Labels) {
  heddle::runtime rt(1);
  const std::string long_label(5000, 'L');
  serial_queue a(rt, long_label);
  EXPECT_EQ(std::string(a.label()), long_label);
  serial_queue b(rt, "");
  EXPECT_STREQ(b.label(), "");
  serial_queue c(rt);
  EXPECT_STREQ(c.label(), "");
  // A string_view of part of a buffer: its characters only.
  const char buffer[] = "prefix-and-more";
  serial_queue d(rt, std::string_view(buffer, 6));
  EXPECT_STREQ(d.label(), "prefix");
  serial_queue child("child-label", a);
  EXPECT_STREQ(child.label(), "child-label");
  // The long label in messages.
  const std::string m = what_of<std::logic_error>([&] { a.resume(); });
  EXPECT_NE(m.find(long_label), std::string::npos);
  EXPECT_EQ(a.sync([] { return 1; }), 1);
}

TEST(SerialQueue, CopiesShareTheQueue) {
  watchdog dog("SerialQueue.CopiesShareTheQueue", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "shared");
  serial_queue copy = q;
  serial_queue other(rt, "shared");
  EXPECT_TRUE(copy == q);
  EXPECT_FALSE(other == q);
  EXPECT_STREQ(copy.label(), "shared");
  std::vector<int> seen;
  for (int i = 0; i < 100; ++i) (i % 2 ? q : copy).async([&seen, i] { seen.push_back(i); });
  const auto got = copy.sync([&] { return seen; });
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], i);
  // Suspending through one handle holds the other.
  copy.suspend();
  std::atomic<bool> ran{false};
  q.async([&] { ran = true; });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(ran.load());
  q.resume();
  EXPECT_TRUE(eventually([&] { return ran.load(); }));
  // Assignment and move.
  serial_queue assigned = other;
  assigned = q;
  EXPECT_TRUE(assigned == q);
  serial_queue moved = std::move(assigned);
  EXPECT_TRUE(moved == q);
  EXPECT_FALSE(assigned.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_STREQ(assigned.label(), "");
  EXPECT_FALSE(assigned.is_current());
  EXPECT_THROW(assigned.async([] {}), std::logic_error);
  EXPECT_THROW(assigned.sync([] {}), std::logic_error);
  EXPECT_THROW(assigned.suspend(), std::logic_error);
  EXPECT_THROW(assigned.resume(), std::logic_error);
  EXPECT_THROW(assigned.after(1ms, [] {}), std::logic_error);
  EXPECT_THROW(assigned.set_error_handler(nullptr), std::logic_error);
  EXPECT_THROW(serial_queue("child-of-nothing", assigned), std::logic_error);
  EXPECT_EQ(moved.sync([] { return 1; }), 1);
}

// ---------------------------------------------------------------------------------------------
// Lifetime

// The queue lives while it has work: items pending when the last handle goes still run.
TEST(SerialQueueLifetime, DroppingTheLastHandleStillRunsPendingItems) {
  watchdog dog("SerialQueueLifetime.DroppingTheLastHandleStillRunsPendingItems", 60s);
  heddle::runtime rt(2);
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  gate g;
  std::vector<int> seen;  // read once all ran (ran's release/acquire orders it)
  {
    serial_queue q(rt, "orphan");
    q.async([&] { g.wait(); });
    for (int i = 0; i < 1000; ++i)
      q.async([&, i, t = heddle_test::tracked(live)] {
        seen.push_back(i);
        ran.fetch_add(1, std::memory_order_release);
      });
  }
  g.open();
  ASSERT_TRUE(eventually([&] { return ran.load(std::memory_order_acquire) == 1000; }));
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_TRUE(eventually([&] { return live->load() == 0; }));
  // Idle and dropped at once, many times (ASan: no leak).
  for (int i = 0; i < 1000; ++i) {
    serial_queue q(rt, "short-lived");
    q.async([&] { ran++; });
  }
  EXPECT_TRUE(eventually([&] { return ran.load() == 2000; }));
}

// Dropping the last handle of a suspended queue discards its items at once: what they captured is
// destroyed and they never run.
TEST(SerialQueueLifetime, DroppingASuspendedQueueDiscardsItsItems) {
  watchdog dog("SerialQueueLifetime.DroppingASuspendedQueueDiscardsItsItems", 60s);
  heddle::runtime rt(2);
  auto live = heddle_test::live_counter();
  auto token = std::make_shared<int>(1);
  std::atomic<int> ran{0};
  std::optional<serial_queue> q;
  q.emplace(rt, "suspended-and-dropped");
  q->suspend();
  for (int i = 0; i < 100; ++i) q->async([&ran, token, t = heddle_test::tracked(live)] { ran++; });
  EXPECT_EQ(token.use_count(), 101);
  EXPECT_EQ(live->load(), 100);
  q.reset();
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(live->load(), 0);
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ran.load(), 0);
}

// A suspended child dropped with its items: the same, and its target lives on.
TEST(SerialQueueLifetime, DroppingASuspendedChildDiscardsItsItems) {
  watchdog dog("SerialQueueLifetime.DroppingASuspendedChildDiscardsItsItems", 60s);
  heddle::runtime rt(2);
  serial_queue target(rt, "surviving-target");
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  {
    serial_queue child("dropped-child", target);
    child.suspend();
    for (int i = 0; i < 50; ++i) child.async([&ran, t = heddle_test::tracked(live)] { ran++; });
  }
  EXPECT_EQ(live->load(), 0);
  EXPECT_EQ(target.sync([&] { return ran.load(); }), 0);
}

// A suspended queue dropped while a delayed item is still on its timer: the item reaches a queue
// that nobody can resume, and is discarded on arrival.
TEST(SerialQueueLifetime, ADelayedItemReachingADroppedSuspendedQueueIsDiscarded) {
  watchdog dog("SerialQueueLifetime.ADelayedItemReachingADroppedSuspendedQueueIsDiscarded", 60s);
  heddle::runtime rt(2);
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  {
    serial_queue q(rt, "dropped-before-its-timer");
    q.suspend();
    q.after(20ms, [&ran, t = heddle_test::tracked(live)] { ran++; });
  }
  EXPECT_EQ(live->load(), 1);  // on its timer, which holds the queue
  EXPECT_TRUE(eventually([&] { return live->load() == 0; }));
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ran.load(), 0);
}

// A suspended target with a child's items waiting in it, both handles dropped: the target is
// dropped while suspended, so its items (the child's batch) are discarded, and so are the child's.
TEST(SerialQueueLifetime, DroppingASuspendedTargetWithAChildsItems) {
  watchdog dog("SerialQueueLifetime.DroppingASuspendedTargetWithAChildsItems", 60s);
  heddle::runtime rt(2);
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  {
    serial_queue target(rt, "dropped-target");
    serial_queue child("child-of-dropped", target);
    target.suspend();
    for (int i = 0; i < 10; ++i) child.async([&ran, t = heddle_test::tracked(live)] { ran++; });
    for (int i = 0; i < 10; ++i) target.async([&ran, t = heddle_test::tracked(live)] { ran++; });
  }
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(live->load(), 0) << "items of a dropped suspended target (and its child) were not discarded";
}

// ---------------------------------------------------------------------------------------------
// The runtime's shutdown

// A runtime destroyed with items pending: they never run, what they captured is destroyed, and a
// sync() caller gets task_cancelled. The only worker is held by a task until the destructor has
// begun, so the queue's batch is still waiting on the scheduler then.
TEST(SerialQueueShutdown, PendingItemsAreDiscarded) {
  watchdog dog("SerialQueueShutdown.PendingItemsAreDiscarded", 60s);
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
  std::optional<serial_queue> q;
  q.emplace(*rt, "stopping");
  serial_queue delayed(*rt, "stopping-delayed");
  serial_queue child("stopping-child", *q);
  for (int i = 0; i < 100; ++i) q->async([&ran, t = heddle_test::tracked(live)] { ran++; });
  for (int i = 0; i < 10; ++i) child.async([&ran, t = heddle_test::tracked(live)] { ran++; });
  delayed.after(1h, [&ran, t = heddle_test::tracked(live)] { ran++; });
  std::string sync_outcome;
  std::atomic<bool> sync_started{false};
  std::thread caller([&, copy = *q] {
    serial_queue mine = copy;
    sync_started = true;
    try {
      mine.sync([&] { ran++; });
      sync_outcome = "returned";
    } catch (const heddle::task_cancelled&) {
      sync_outcome = "task_cancelled";
    } catch (const std::exception& e) {
      sync_outcome = std::string("other: ") + e.what();
    }
  });
  ASSERT_TRUE(eventually([&] { return sync_started.load(); }));
  std::this_thread::sleep_for(20ms);  // the caller is asleep in sync()
  q.reset();                          // the pending batch keeps the queue alive
  {
    watchdog inner("destroying a runtime with serial queue items pending", 30s);
    rt.reset();
  }
  caller.join();
  holder.get();
  EXPECT_EQ(sync_outcome, "task_cancelled");
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(live->load(), 0);
}
}  // namespace
