// SPDX-License-Identifier: Apache-2.0
// heddle::group: enter/leave/wait from workers and foreign threads; notifications (exactly once, in
// registration order, at once on an empty group, not at a zero that came before them); reuse;
// when_empty(); group.async on serial and concurrent queues, including items that throw and items
// discarded by a stopping runtime; nested groups; dropping the last handle; a stress test of
// concurrent enter/leave/notify; the unbalanced leave.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
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

namespace {

using namespace std::chrono_literals;
using heddle::concurrent_queue;
using heddle::group;
using heddle::serial_queue;
using heddle_test::eventually;
using heddle_test::gate;
using heddle_test::scaled;
using heddle_test::watchdog;

// ---------------------------------------------------------------------------------------------
// enter / leave / wait

TEST(Group, WaitForForeignThreads) {
  watchdog dog("Group.WaitForForeignThreads", 60s);
  for (int round = 0; round < scaled(50, 10); ++round) {
    group g;
    EXPECT_EQ(g.pending(), 0u);
    const int n = 8;
    long work[n] = {};  // plain: written before leave(), read after wait()
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      g.enter();
      threads.emplace_back([g, &work, i]() mutable {
        std::this_thread::sleep_for(std::chrono::microseconds(100 * (i % 3)));
        work[i] = i + 1;
        g.leave();
      });
    }
    g.wait();
    EXPECT_EQ(g.pending(), 0u);
    long sum = 0;
    for (long w : work) sum += w;
    EXPECT_EQ(sum, n * (n + 1) / 2);
    for (auto& t : threads) t.join();
  }
}

TEST(Group, WaitForWorkers) {
  watchdog dog("Group.WaitForWorkers", 60s);
  heddle::runtime rt(4);
  const int n = scaled(10000, 1000);
  std::vector<int> done(n, 0);
  group g;
  for (int i = 0; i < n; ++i) g.enter();
  heddle::parallel_for(0, n, [&](int i) {
    done[i] = 1;
    g.leave();
  });
  g.wait();
  long sum = 0;
  for (int d : done) sum += d;
  EXPECT_EQ(sum, n);
  // Enter on workers, wait on a worker, leave from other tasks.
  std::atomic<long> ran{0};
  auto f = rt.task([&] {
    group inner;
    for (int i = 0; i < 100; ++i) {
      inner.enter();
      (void)heddle::task([&ran, inner]() mutable {
        ran++;
        inner.leave();
      });
    }
    inner.wait();
    return ran.load();
  });
  EXPECT_EQ(*f, 100);
}

// With one worker, a task that waits for work queued on the same runtime must run that work
// itself while it waits.
TEST(Group, WaitOnTheOnlyWorkerHelps) {
  watchdog dog("Group.WaitOnTheOnlyWorkerHelps", 60s);
  heddle::runtime rt(1);
  concurrent_queue cq(rt);
  serial_queue q(rt, "helped");
  auto f = rt.task([&] {
    group g;
    std::atomic<int> ran{0};
    for (int i = 0; i < 50; ++i) g.async(cq, [&] { ran++; });
    for (int i = 0; i < 50; ++i) g.async(q, [&] { ran++; });
    g.wait();
    const int after_wait = ran.load();
    g.async(cq, [&] { ran++; });
    g.when_empty().get();
    return after_wait * 1000 + ran.load();
  });
  EXPECT_EQ(*f, 100 * 1000 + 101);
}

TEST(Group, CopiesShareTheCount) {
  group g;
  group copy = g;
  copy.enter();
  EXPECT_EQ(g.pending(), 1u);
  group assigned;
  assigned = g;
  assigned.enter();
  EXPECT_EQ(copy.pending(), 2u);
  g.leave();
  g.leave();
  EXPECT_EQ(assigned.pending(), 0u);
  copy.wait();
  heddle::group& same = assigned;
  assigned = same;  // self-assignment keeps the group
  EXPECT_EQ(assigned.pending(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Notifications

TEST(GroupNotify, RunsOnceInRegistrationOrder) {
  watchdog dog("GroupNotify.RunsOnceInRegistrationOrder", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "notified");
  group g;
  std::vector<int> seen;  // touched on q only
  g.enter();
  g.enter();
  for (int i = 0; i < 100; ++i) g.notify(q, [&seen, i] { seen.push_back(i); });
  g.leave();
  EXPECT_EQ(q.sync([&] { return seen.size(); }), 0u);  // one entry left
  g.leave();
  // The leave handed them to q; this sync runs after them.
  const auto got = q.sync([&] { return seen; });
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[i], i);
  // Later zeros do not run them again.
  for (int round = 0; round < 5; ++round) {
    g.enter();
    g.leave();
  }
  g.wait();
  EXPECT_EQ(q.sync([&] { return seen.size(); }), 100u);
}

// On an empty group a notification is handed to its queue at once.
TEST(GroupNotify, AtOnceWhenEmpty) {
  watchdog dog("GroupNotify.AtOnceWhenEmpty", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "immediate");
  group g;
  int ran = 0;
  g.notify(q, [&] { ran++; });
  EXPECT_EQ(q.sync([&] { return ran; }), 1);  // queued before this sync
  std::atomic<int> on_cq{0};
  g.notify(concurrent_queue(rt), [&] { on_cq++; });
  EXPECT_TRUE(eventually([&] { return on_cq.load() == 1; }));
  // After a round too.
  g.enter();
  g.leave();
  g.notify(q, [&] { ran++; });
  EXPECT_EQ(q.sync([&] { return ran; }), 2);
}

// Concurrent-queue notifications run on the runtime's workers, each once.
TEST(GroupNotify, OnTheConcurrentQueue) {
  watchdog dog("GroupNotify.OnTheConcurrentQueue", 60s);
  heddle::runtime rt(3);
  concurrent_queue cq(rt);
  group g;
  std::vector<std::atomic<int>> runs(200);
  std::atomic<int> on_worker{0};
  g.enter();
  for (int i = 0; i < 200; ++i)
    g.notify(cq, [&, i] {
      runs[i]++;
      if (heddle_test::on_worker_of(rt)) on_worker++;
    });
  std::this_thread::sleep_for(10ms);
  for (auto& r : runs) EXPECT_EQ(r.load(), 0);
  g.leave();
  ASSERT_TRUE(eventually([&] { return on_worker.load() == 200; }));
  std::this_thread::sleep_for(10ms);
  for (auto& r : runs) EXPECT_EQ(r.load(), 1);
}

// A notification is due at the first zero after its registration, even if the group was entered
// again before its function ran; one registered after re-entering waits for the next zero. The
// notification queue is suspended, so "handed to the queue" and "ran" can be told apart.
TEST(GroupNotify, ZerosBeforeAndAfterRegistration) {
  watchdog dog("GroupNotify.ZerosBeforeAndAfterRegistration", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "held-notifications");
  group g;
  std::vector<char> seen;  // touched on q only
  q.suspend();
  g.enter();
  g.notify(q, [&] { seen.push_back('A'); });  // due at the next zero
  g.leave();                                  // zero: A handed to q (which holds it)
  g.enter();                                  // entered again before A ran
  g.notify(q, [&] { seen.push_back('B'); });  // waits for the next zero
  q.resume();
  EXPECT_EQ(q.sync([&] { return std::string(seen.begin(), seen.end()); }), "A");
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(q.sync([&] { return std::string(seen.begin(), seen.end()); }), "A");
  g.enter();  // a second entry: B waits for both
  g.notify(q, [&] { seen.push_back('C'); });
  g.leave();
  EXPECT_EQ(q.sync([&] { return std::string(seen.begin(), seen.end()); }), "A");
  g.leave();
  EXPECT_EQ(q.sync([&] { return std::string(seen.begin(), seen.end()); }), "ABC");
  // Futures alike.
  g.enter();
  auto first = g.when_empty();
  g.leave();
  g.enter();
  auto second = g.when_empty();
  EXPECT_TRUE(first.is_ready());
  EXPECT_FALSE(second.is_ready());
  g.leave();
  EXPECT_TRUE(second.is_ready());
  first.get();
  second.get();
}

// Reuse over many rounds, each with its own items and notifications.
TEST(GroupNotify, ReusedOverManyRounds) {
  watchdog dog("GroupNotify.ReusedOverManyRounds", 60s);
  heddle::runtime rt(3);
  serial_queue q(rt, "rounds");
  concurrent_queue cq(rt);
  group g;
  const int rounds = scaled(200, 40);
  std::vector<int> notified;  // on q
  std::atomic<long> items{0};
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 10; ++k) g.async(cq, [&] { items++; });
    g.notify(q, [&notified, r] { notified.push_back(r); });
    g.wait();
    EXPECT_EQ(items.load(), 10L * (r + 1));
  }
  // The last zero's notification may still be on its way to q when wait() returns (see
  // WaitReturnsAfterTheNotificationsOfItsZero).
  ASSERT_TRUE(eventually([&] { return q.sync([&] { return notified.size(); }) == static_cast<std::size_t>(rounds); }));
  const auto got = q.sync([&] { return notified; });
  for (int r = 0; r < rounds; ++r) EXPECT_EQ(got[r], r);
}

// Notifications registered before a zero are handed to their queues at that zero; wait() and
// when_empty() are released by the same zero, after them (registration order). So an item sent
// to q after wait() has returned comes after the notification on q. The zero is brought by
// another thread, so that wait() can find the count at zero while the leaver is still firing.
TEST(GroupNotify, WaitReturnsAfterTheNotificationsOfItsZero) {
  watchdog dog("GroupNotify.WaitReturnsAfterTheNotificationsOfItsZero", 120s);
  heddle::runtime rt(2);
  serial_queue q(rt, "ordered-after-wait");
  concurrent_queue cq(rt);
  const int rounds = scaled(3000, 300);
  std::vector<int> seen;  // on q
  for (int r = 0; r < rounds; ++r) {
    group g;
    g.enter();
    for (int i = 0; i < 20; ++i) g.notify(cq, [] {});  // the leaver hands these over first
    g.notify(q, [&seen] { seen.push_back(1); });
    std::thread leaver([g]() mutable { g.leave(); });
    while (g.pending() != 0) std::this_thread::yield();  // the zero has happened
    g.wait();
    q.async([&seen] { seen.push_back(2); });
    leaver.join();
  }
  const auto got = q.sync([&] { return seen; });
  ASSERT_EQ(got.size(), 2u * rounds);
  int overtaken = 0;
  for (int r = 0; r < rounds; ++r)
    if (got[2 * r] != 1) overtaken++;
  EXPECT_EQ(overtaken, 0) << "of " << rounds << " rounds";
}

// ---------------------------------------------------------------------------------------------
// when_empty

TEST(GroupWhenEmpty, ReadyAtTheNextZero) {
  watchdog dog("GroupWhenEmpty.ReadyAtTheNextZero", 60s);
  heddle::runtime rt(2);
  group g;
  auto now = g.when_empty();
  EXPECT_TRUE(now.is_ready());
  now.get();
  g.enter();
  auto later = g.when_empty();
  auto successor = g.when_empty().then([] { return 5; });
  EXPECT_FALSE(later.is_ready());
  std::thread leaver([g]() mutable {
    std::this_thread::sleep_for(10ms);
    g.leave();
  });
  later.get();
  EXPECT_EQ(*successor, 5);
  leaver.join();
  // From a worker.
  g.enter();
  auto waiter = rt.task([&] {
    g.when_empty().get();
    return 1;
  });
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(waiter.is_ready());
  g.leave();
  EXPECT_EQ(*waiter, 1);
}

// ---------------------------------------------------------------------------------------------
// group.async

TEST(GroupAsync, OnSerialAndConcurrentQueues) {
  watchdog dog("GroupAsync.OnSerialAndConcurrentQueues", 60s);
  heddle::runtime rt(4);
  serial_queue q(rt, "group-serial");
  concurrent_queue cq(rt);
  group g;
  const int n = scaled(5000, 500);
  std::vector<int> order;  // on q
  std::atomic<int> concurrent_ran{0};
  for (int i = 0; i < n; ++i) {
    g.async(q, [&order, i] { order.push_back(i); });
    g.async(cq, [&] { concurrent_ran++; });
  }
  g.wait();
  EXPECT_EQ(g.pending(), 0u);
  EXPECT_EQ(concurrent_ran.load(), n);
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));  // wait() orders it before this read
  for (int i = 0; i < n; ++i) EXPECT_EQ(order[i], i);
  // From workers and from items of other queues.
  serial_queue other(rt, "group-other");
  heddle::parallel_for(0, 100, [&](int) { g.async(cq, [&] { concurrent_ran++; }); });
  for (int i = 0; i < 100; ++i) g.async(other, [&, g]() mutable { g.async(q, [&] { concurrent_ran++; }); });
  g.wait();
  EXPECT_EQ(concurrent_ran.load(), n + 200);
}

// A group.async item that uses a group of its own.
TEST(GroupAsync, NestedGroups) {
  watchdog dog("GroupAsync.NestedGroups", 60s);
  heddle::runtime rt(4);
  concurrent_queue cq(rt);
  serial_queue q(rt, "nested-groups");
  group outer;
  std::atomic<long> leaves{0};
  std::vector<long> per_item(20, 0);
  for (int i = 0; i < 20; ++i) {
    auto body = [&, i] {
      group inner;
      std::atomic<long> mine{0};
      for (int k = 0; k < 50; ++k)
        inner.async(cq, [&] {
          mine++;
          leaves++;
        });
      inner.wait();
      per_item[i] = mine.load();
    };
    if (i % 2) outer.async(cq, body);
    else outer.async(q, body);  // waits inside a serial queue's item
  }
  outer.wait();
  EXPECT_EQ(leaves.load(), 20 * 50);
  for (long m : per_item) EXPECT_EQ(m, 50);
}

// The item's leave happens when it throws (the queue's error handler gets the exception).
TEST(GroupAsync, LeavesWhenTheItemThrows) {
  watchdog dog("GroupAsync.LeavesWhenTheItemThrows", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "throwing-group-items");
  std::atomic<int> errors{0};
  q.set_error_handler([&](std::exception_ptr) { errors++; });
  group g;
  for (int i = 0; i < 20; ++i)
    g.async(q, [i] {
      if (i % 2) throw std::runtime_error("odd");
    });
  g.wait();
  EXPECT_EQ(g.pending(), 0u);
  EXPECT_EQ(errors.load(), 10);
}

// Items discarded with a suspended queue (its last handle dropped) leave too.
TEST(GroupAsync, LeavesWhenDiscardedWithASuspendedQueue) {
  watchdog dog("GroupAsync.LeavesWhenDiscardedWithASuspendedQueue", 60s);
  heddle::runtime rt(2);
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  group g;
  {
    serial_queue q(rt, "suspended-group-items");
    q.suspend();
    for (int i = 0; i < 10; ++i) g.async(q, [&ran, t = heddle_test::tracked(live)] { ran++; });
    EXPECT_EQ(g.pending(), 10u);
  }
  EXPECT_EQ(g.pending(), 0u);
  g.wait();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(live->load(), 0);
}

// Items discarded by a stopping runtime leave too; their notifications, on that runtime, are
// discarded; nothing ran and what they captured is destroyed.
TEST(GroupAsync, LeavesWhenDiscardedByTheShutdown) {
  watchdog dog("GroupAsync.LeavesWhenDiscardedByTheShutdown", 60s);
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  group g;
  auto rt = std::make_unique<heddle::runtime>(1);
  heddle::core_detail::runtime_core* core = heddle::core_detail::access::core_of(*rt);
  std::atomic<bool> holding{false};
  auto holder = rt->task([&] {
    holding = true;
    while (!heddle::core_detail::core_stopping(core)) std::this_thread::sleep_for(100us);
  });
  ASSERT_TRUE(eventually([&] { return holding.load(); }));
  {
    serial_queue q(*rt, "discarded-group-items");
    concurrent_queue cq(*rt);
    for (int i = 0; i < 10; ++i) {
      g.async(q, [&ran, t = heddle_test::tracked(live)] { ran++; });
      g.async(cq, [&ran, t = heddle_test::tracked(live)] { ran++; });
    }
    g.notify(q, [&ran, t = heddle_test::tracked(live)] { ran++; });
    g.notify(cq, [&ran, t = heddle_test::tracked(live)] { ran++; });
  }
  EXPECT_EQ(g.pending(), 20u);
  auto empty = g.when_empty();
  {
    watchdog inner("destroying a runtime with group items pending", 30s);
    rt.reset();
  }
  holder.get();
  EXPECT_EQ(g.pending(), 0u);
  EXPECT_TRUE(empty.is_ready());
  g.wait();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(live->load(), 0);
}

// ---------------------------------------------------------------------------------------------
// Lifetime

// Dropping the last handle with notifications pending discards them: their captures are destroyed,
// they never run, and a when_empty() future fails with broken_promise.
TEST(GroupLifetime, DroppingTheLastHandleDiscardsPendingNotifications) {
  watchdog dog("GroupLifetime.DroppingTheLastHandleDiscardsPendingNotifications", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "never-notified");
  auto live = heddle_test::live_counter();
  std::atomic<int> ran{0};
  heddle::future<void> empty;
  {
    group g;
    g.enter();
    for (int i = 0; i < 10; ++i) g.notify(q, [&ran, t = heddle_test::tracked(live)] { ran++; });
    g.notify(concurrent_queue(rt), [&ran, t = heddle_test::tracked(live)] { ran++; });
    empty = g.when_empty();
    EXPECT_EQ(live->load(), 11);
  }
  EXPECT_EQ(live->load(), 0);
  std::string outcome;
  try {
    empty.get();
    outcome = "ready";
  } catch (const std::future_error& e) {
    outcome = e.code() == std::future_errc::broken_promise ? "broken_promise" : e.what();
  }
  EXPECT_EQ(outcome, "broken_promise");
  q.sync([] {});
  EXPECT_EQ(ran.load(), 0);
}

// A group.async item keeps the group alive: its notifications still fire after the last handle
// is gone.
TEST(GroupLifetime, PendingItemsKeepTheGroupAlive) {
  watchdog dog("GroupLifetime.PendingItemsKeepTheGroupAlive", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "orphan-group");
  gate g_open;
  std::atomic<int> notified{0};
  {
    group g;
    g.async(q, [&] { g_open.wait(); });
    g.notify(q, [&] { notified++; });
  }
  g_open.open();
  EXPECT_TRUE(eventually([&] { return notified.load() == 1; }));
}

// wait() may return while the leave() that released it is still finishing on another thread;
// destroying the group right after wait() (the usual pattern, the leaver holding a reference) must
// be safe. Many notifications registered after when_empty() keep the leaver busy after it has
// released the waiter; AddressSanitizer reports a use after free if it then touches the group.
TEST(GroupLifetime, DestroyedRightAfterWaitReturns) {
  watchdog dog("GroupLifetime.DestroyedRightAfterWaitReturns", 120s);
  heddle::runtime rt(2);
  concurrent_queue cq(rt);
  std::atomic<long> notified{0};
  const int rounds = scaled(20, 10);
  for (int round = 0; round < rounds; ++round) {
    auto g = std::make_unique<group>();
    g->enter();
    auto empty = g->when_empty();
    for (int i = 0; i < 2000; ++i) g->notify(cq, [&] { notified++; });
    std::thread leaver([gp = g.get()] { gp->leave(); });
    empty.wait();
    g.reset();
    leaver.join();
  }
  EXPECT_TRUE(eventually([&] { return notified.load() == 2000L * rounds; }));
}

// ---------------------------------------------------------------------------------------------
// Stress

// Threads enter, register notifications (serial and concurrent queues, futures) and leave, all at
// once. Every notification runs exactly once, and never before its registrar's own leave (it was
// registered while the registrar held an entry, so the count could not reach zero before).
TEST(GroupStress, ConcurrentEnterLeaveNotify) {
  watchdog dog("GroupStress.ConcurrentEnterLeaveNotify", 180s);
  heddle::runtime rt(4);
  serial_queue q(rt, "stress-notifications");
  concurrent_queue cq(rt);
  group g;
  const int threads = 6;
  const int per = scaled(3000, 400);
  const int total = threads * per;
  std::vector<std::atomic<int>> runs(total);
  std::vector<std::atomic<bool>> left(total);
  std::atomic<int> early{0};
  std::atomic<int> futures_ok{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t seed = 77 + t;
      std::vector<heddle::future<void>> futures;
      for (int i = 0; i < per; ++i) {
        const int id = t * per + i;
        seed = heddle_test::mix(seed);
        g.enter();
        auto note = [&, id] {
          if (!left[id].load(std::memory_order_relaxed)) early++;
          runs[id]++;
        };
        if (seed % 2) g.notify(q, note);
        else g.notify(cq, note);
        if (seed % 7 == 0) futures.push_back(g.when_empty());
        if (seed % 5 == 0) heddle_test::spin_work(static_cast<unsigned>(seed % 500));
        if (seed % 3 == 0) {
          // Work of the same group done by an item (its leave may be the one that fires).
          g.async(cq, [] { heddle_test::spin_work(50); });
        }
        left[id].store(true, std::memory_order_relaxed);
        g.leave();
      }
      for (auto& f : futures) {
        f.get();
        futures_ok++;
      }
    });
  for (auto& t : ts) t.join();
  g.wait();
  ASSERT_TRUE(eventually(
      [&] {
        long sum = 0;
        for (auto& r : runs) sum += r.load();
        return sum >= total;
      },
      std::chrono::seconds(60)));
  q.sync([] {});
  std::this_thread::sleep_for(20ms);
  int wrong = 0;
  for (int id = 0; id < total; ++id)
    if (runs[id].load() != 1 && wrong++ < 5)
      ADD_FAILURE() << "notification " << id << " ran " << runs[id].load() << " times";
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(g.pending(), 0u);
}

// A leave that brings the count to zero races with a registration: the leaver's zero must fire
// the notification registered before it (M) and not one registered, by a thread that had entered
// again, after it (N), even when the leaver's slow path runs after that registration. N checks that
// its registrar has left; each runs once.
TEST(GroupStress, RegistrationRacingWithZero) {
  watchdog dog("GroupStress.RegistrationRacingWithZero", 180s);
  heddle::runtime rt(3);
  concurrent_queue cq(rt);
  const int rounds = scaled(3000, 300);
  group g;
  std::atomic<int> early{0};
  std::vector<std::atomic<int>> runs_m(rounds), runs_n(rounds);
  for (int r = 0; r < rounds; ++r) {
    g.enter();                                    // the leaver's entry
    g.notify(cq, [&runs_m, r] { runs_m[r]++; });  // M: due at the leaver's zero
    std::atomic<bool> go{false}, mine_left{false};
    std::thread leaver([&go, g]() mutable {
      while (!go.load()) {
      }
      g.leave();
    });
    go = true;
    g.enter();
    g.notify(cq, [&runs_n, &early, &mine_left, r] {  // N: due at this thread's zero
      if (!mine_left.load()) early++;
      runs_n[r]++;
    });
    heddle_test::spin_work(static_cast<unsigned>((r % 50) * 20));
    mine_left = true;
    g.leave();
    leaver.join();
    g.wait();
    // N captured mine_left by reference: let it run before the next round.
    ASSERT_TRUE(eventually([&] { return runs_n[r].load() == 1 && runs_m[r].load() == 1; })) << r;
  }
  EXPECT_EQ(early.load(), 0);
  std::this_thread::sleep_for(10ms);
  for (int r = 0; r < rounds; ++r) {
    ASSERT_EQ(runs_m[r].load(), 1) << r;
    ASSERT_EQ(runs_n[r].load(), 1) << r;
  }
}

// ---------------------------------------------------------------------------------------------
// Misuse

TEST(GroupDeathTest, UnbalancedLeaveAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        group g;
        g.leave();
      },
      "heddle: misuse: heddle::group::leave: more leave\\(\\) than enter\\(\\) calls");
  EXPECT_DEATH(
      {
        group g;
        g.enter();
        g.leave();
        g.leave();
      },
      "heddle: misuse: heddle::group::leave: more leave\\(\\) than enter\\(\\) calls");
}

}  // namespace
