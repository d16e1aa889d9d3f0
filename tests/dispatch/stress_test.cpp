// SPDX-License-Identifier: Apache-2.0
// Stress of the dispatch layer: many queues (trees of targets), many producers (foreign threads and
// workers), async mixed with sync, suspend/resume toggled from another thread, groups across queues,
// queues and sources created and dropped while busy. Every check is on results: counts, per-producer
// order on each queue, no overlap within a tree of queues, nothing lost or run twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/dispatch.hpp>
#include <heddle/heddle.hpp>

#include "dispatch_test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle::concurrent_queue;
using heddle::group;
using heddle::serial_queue;
using heddle_test::eventually;
using heddle_test::exclusion;
using heddle_test::order_check;
using heddle_test::progress_watchdog;
using heddle_test::scaled;
using heddle_test::watchdog;

// Ticks `dog` each time progress() changes, until done(): a stall still trips the watchdog.
template <class Progress, class Done>
std::thread tick_on_progress(progress_watchdog& dog, Progress progress, Done done) {
  return std::thread([&dog, progress, done] {
    auto last = progress();
    while (!done()) {
      const auto now = progress();
      if (now != last) {
        dog.tick();
        last = now;
      }
      std::this_thread::sleep_for(10ms);
    }
  });
}

// A forest of queues: `roots` roots, each with children and grandchildren. Items of one tree never
// overlap (one exclusion per tree); each queue keeps its own per-producer order.
struct forest {
  std::vector<serial_queue> queues;
  std::vector<int> tree;                            // the tree of each queue
  std::vector<std::unique_ptr<exclusion>> inside;   // per tree
  std::vector<std::unique_ptr<order_check>> order;  // per queue

  forest(heddle::runtime& rt, int roots, int producers) {
    for (int r = 0; r < roots; ++r) {
      inside.push_back(std::make_unique<exclusion>());
      const auto prio = r == 0 ? heddle::queue_priority::high : heddle::queue_priority::normal;
      serial_queue root(rt, "root-" + std::to_string(r), prio);
      add(root, r);
      for (int c = 0; c < 2; ++c) {
        serial_queue child("child-" + std::to_string(r) + "-" + std::to_string(c), root);
        add(child, r);
        add(serial_queue("grandchild-" + std::to_string(r) + "-" + std::to_string(c), child), r);
      }
    }
    for (std::size_t i = 0; i < queues.size(); ++i) order.push_back(std::make_unique<order_check>(producers));
  }
  void add(serial_queue q, int t) {
    queues.push_back(std::move(q));
    tree.push_back(t);
  }
  std::size_t size() const { return queues.size(); }
  // The item body for producer p's item number seq on queue k.
  void visit(std::size_t k, int p, long seq) {
    exclusion::scope s(*inside[static_cast<std::size_t>(tree[k])]);
    order[k]->see(static_cast<std::size_t>(p), seq);
  }
};

// Producers pick queues at random and send async items (and now and then a sync), from foreign
// threads and from workers, while a thread suspends and resumes random queues.
TEST(DispatchStress, ManyQueuesManyProducers) {
  progress_watchdog dog("DispatchStress.ManyQueuesManyProducers", 60s);
  heddle::runtime rt(4);
  const int thread_producers = 4, worker_producers = 8;
  const int producers = thread_producers + worker_producers;
  forest f(rt, 3, producers);
  const int per = scaled(100000, 20000);
  // next[p][k]: producer p's next sequence number on queue k (the producer's own).
  std::vector<std::vector<long>> next(producers, std::vector<long>(f.size(), 0));
  std::atomic<long> sync_errors{0};
  auto produce = [&](int p) {
    std::uint64_t seed = 1000 + static_cast<std::uint64_t>(p);
    for (int i = 0; i < per; ++i) {
      seed = heddle_test::mix(seed);
      const std::size_t k = seed % f.size();
      const long seq = next[p][k]++;
      if (seed % 50 == 7) {
        const long seen = f.queues[k].sync([&f, k, p, seq] {
          f.visit(k, p, seq);
          return f.order[k]->next(static_cast<std::size_t>(p));
        });
        if (seen != seq + 1) sync_errors++;
      } else {
        f.queues[k].async([&f, k, p, seq] { f.visit(k, p, seq); });
      }
      if (i % 1024 == 0) dog.tick();
    }
  };
  std::atomic<bool> stop{false};
  std::thread toggler([&] {
    std::uint64_t seed = 99;
    while (!stop.load()) {
      seed = heddle_test::mix(seed);
      serial_queue q = f.queues[seed % f.size()];
      q.suspend();
      if (seed % 3 == 0) q.suspend();
      std::this_thread::sleep_for(std::chrono::microseconds(seed % 300));
      q.resume();
      if (seed % 3 == 0) q.resume();
    }
  });
  std::vector<std::thread> threads;
  for (int p = 0; p < thread_producers; ++p) threads.emplace_back(produce, p);
  heddle::parallel_for(
      thread_producers, producers, [&](int p) { produce(p); }, 1);
  for (auto& t : threads) t.join();
  stop = true;
  toggler.join();
  long total = 0;
  for (std::size_t k = 0; k < f.size(); ++k) {
    total += f.queues[k].sync([&] { return f.order[k]->total(); });
    EXPECT_EQ(f.queues[k].sync([&] { return f.order[k]->errors(); }), "") << f.queues[k].label();
    for (int p = 0; p < producers; ++p)
      EXPECT_EQ(f.queues[k].sync([&] { return f.order[k]->next(static_cast<std::size_t>(p)); }), next[p][k]);
  }
  EXPECT_EQ(total, static_cast<long>(producers) * per);
  for (auto& e : f.inside) EXPECT_EQ(e->overlaps(), 0);
  EXPECT_EQ(sync_errors.load(), 0);
}

// Items that send items on: each item on queue k sends the next hop to another queue, from inside
// the queue (producers that are items themselves), with groups counting the chains.
TEST(DispatchStress, ChainsOfItemsAcrossQueues) {
  progress_watchdog dog("DispatchStress.ChainsOfItemsAcrossQueues", 60s);
  heddle::runtime rt(4);
  std::vector<serial_queue> qs;
  for (int i = 0; i < 16; ++i) qs.emplace_back(rt, "hop-" + std::to_string(i));
  const int chains = scaled(2000, 500), hops = 50;
  group g;
  std::vector<long> hop_count(qs.size(), 0);  // per queue, touched by its items only
  std::atomic<long> finished{0};
  struct hop {
    static void send(std::vector<serial_queue>& qs, std::vector<long>& counts, group g, std::atomic<long>& finished,
                     std::uint64_t seed, int left) {
      const std::size_t k = seed % qs.size();
      g.async(qs[k], [&qs, &counts, g, &finished, seed, left, k]() {
        counts[k]++;
        if (left == 0) {
          finished++;
          return;
        }
        send(qs, counts, g, finished, heddle_test::mix(seed), left - 1);
      });
    }
  };
  for (int c = 0; c < chains; ++c) hop::send(qs, hop_count, g, finished, static_cast<std::uint64_t>(c) * 7919, hops);
  std::thread ticker = tick_on_progress(
      dog, [&] { return finished.load(); }, [&] { return finished.load() >= chains; });
  g.wait();
  ticker.join();
  EXPECT_EQ(finished.load(), chains);
  long sum = 0;
  for (std::size_t k = 0; k < qs.size(); ++k) sum += qs[k].sync([&] { return hop_count[k]; });
  EXPECT_EQ(sum, static_cast<long>(chains) * (hops + 1));
}

// Groups shared by threads, with work on serial and concurrent queues and notifications; every
// round's notifications run once, after all of that round's work.
TEST(DispatchStress, GroupsAcrossQueues) {
  progress_watchdog dog("DispatchStress.GroupsAcrossQueues", 60s);
  heddle::runtime rt(4);
  concurrent_queue cq(rt);
  std::vector<serial_queue> qs;
  for (int i = 0; i < 8; ++i) qs.emplace_back(rt, "group-stress-" + std::to_string(i));
  const int threads = 4, rounds = scaled(2000, 400);
  static constexpr int items = 20;  // static: the nested lambdas read it without a capture
  std::atomic<long> wrong{0}, notified{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t seed = 5 + static_cast<std::uint64_t>(t);
      for (int r = 0; r < rounds; ++r) {
        group g;
        auto done = std::make_shared<std::atomic<int>>(0);
        for (int i = 0; i < items; ++i) {
          seed = heddle_test::mix(seed);
          if (seed % 3 == 0) g.async(cq, [done] { (*done)++; });
          else g.async(qs[seed % qs.size()], [done] { (*done)++; });
        }
        auto check = [done, &wrong, &notified] {
          if (done->load() != items) wrong++;
          notified++;
        };
        g.notify(qs[seed % qs.size()], check);
        g.notify(cq, check);
        g.wait();
        if (done->load() != items) wrong++;
        if (r % 16 == 0) dog.tick();
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_TRUE(eventually([&] { return notified.load() == 2L * threads * rounds; }));
  EXPECT_EQ(wrong.load(), 0);
}

// Queues and timer sources created and dropped while they have work: everything submitted runs
// exactly once (or, for suspended queues, is discarded), and every capture is destroyed.
TEST(DispatchStress, QueuesAndSourcesComeAndGo) {
  progress_watchdog dog("DispatchStress.QueuesAndSourcesComeAndGo", 60s);
  heddle::runtime rt(4);
  auto live = heddle_test::live_counter();
  std::atomic<long> ran{0}, expected{0}, ticks{0};
  const int rounds = scaled(8000, 1500);
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t seed = 11 + static_cast<std::uint64_t>(t);
      std::optional<serial_queue> parent;
      for (int r = 0; r < rounds; ++r) {
        seed = heddle_test::mix(seed);
        if (!parent || seed % 16 == 0) parent.emplace(rt, "parent");
        serial_queue q = seed % 2 ? serial_queue(rt, "churn") : serial_queue("churn-child", *parent);
        const bool suspended = seed % 5 == 0;
        if (suspended) q.suspend();
        const int n = static_cast<int>(seed % 20);
        for (int i = 0; i < n; ++i) q.async([&ran, k = heddle_test::tracked(live)] { ran++; });
        if (!suspended) expected += n;
        if (seed % 7 == 0 && !suspended) {  // a source's cancel future needs its queue running
          auto s = heddle::source::timer(std::chrono::microseconds(200 + seed % 500), q,
                                         [&ticks, k = heddle_test::tracked(live)](std::uint64_t c) {
                                           ticks += static_cast<long>(c);
                                         });
          if (seed % 2) std::this_thread::sleep_for(std::chrono::microseconds(seed % 400));
          if (seed % 4 == 1) s.cancel().get();
        }
        if (seed % 9 == 0 && !suspended) q.sync([] {});
        if (r % 64 == 0) dog.tick();
      }
    });
  for (auto& t : ts) t.join();
  std::atomic<bool> checked{false};
  std::thread ticker = tick_on_progress(
      dog, [&] { return live->load() + ran.load(); }, [&] { return checked.load(); });
  EXPECT_TRUE(eventually([&] { return ran.load() == expected.load(); }, 60s));
  EXPECT_TRUE(eventually([&] { return live->load() == 0; }, 60s));
  checked = true;
  ticker.join();
  EXPECT_EQ(ran.load(), expected.load());
}

// Items that sync on other queues in a fixed order (queue i only syncs on queues j > i): there is
// no cycle, so no sync may fail or hang. (A worker that helped with other work while it waited in
// sync() inside an item could run an item of a lower queue that syncs on the queue it holds: a
// false queue_deadlock, or a hang through another thread.)
TEST(DispatchStress, AcyclicSyncChains) {
  progress_watchdog dog("DispatchStress.AcyclicSyncChains", 60s);
  heddle::runtime rt(4);
  const int n = 6;
  // Each level is a child of its own target half the time (a waiting worker then helps instead of
  // taking the level's batch over).
  std::vector<serial_queue> targets, qs;
  for (int i = 0; i < n; ++i) {
    targets.emplace_back(rt, "target-" + std::to_string(i));
    if (i % 2) qs.emplace_back("level-" + std::to_string(i), targets.back());
    else qs.emplace_back(rt, "level-" + std::to_string(i));
  }
  std::vector<long> counts(n, 0);  // per queue, on its items
  std::atomic<long> deadlocks{0}, done{0};
  const int items = scaled(20000, 5000);
  std::function<void(int, std::uint64_t)> visit = [&](int i, std::uint64_t seed) {
    counts[i]++;
    heddle_test::spin_work(static_cast<unsigned>(seed % 2000));
    if (i + 1 < n && seed % 3 != 0) {
      const int j = i + 1 + static_cast<int>(seed % static_cast<std::uint64_t>(n - i - 1));
      try {
        qs[j].sync([&, j, seed] { visit(j, heddle_test::mix(seed)); });
      } catch (const heddle::queue_deadlock&) {
        deadlocks++;
      }
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < 3; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t seed = 21 + static_cast<std::uint64_t>(t);
      for (int k = 0; k < items; ++k) {
        seed = heddle_test::mix(seed);
        const int i = static_cast<int>(seed % n);
        qs[i].async([&, i, seed] {
          visit(i, seed);
          done++;
        });
        if (k % 128 == 0) dog.tick();
      }
    });
  for (auto& t : ts) t.join();
  std::thread ticker = tick_on_progress(
      dog, [&] { return done.load(); }, [&] { return done.load() >= 3L * items; });
  ticker.join();
  for (auto& q : qs) q.sync([] {});
  EXPECT_EQ(deadlocks.load(), 0);
  EXPECT_EQ(done.load(), 3L * items);
}

}  // namespace
