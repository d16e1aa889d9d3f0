// SPDX-License-Identifier: Apache-2.0
// Stress: millions of tiny tasks from inside tasks and from outside threads (each run exactly
// once), random recursive spawn trees against a serial computation, futures forced from foreign
// threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::mix;
using heddle_test::scaled;
using heddle_test::serial_fib;
using heddle_test::task_fib;
using heddle_test::watchdog;

// One counter per task id: a task run twice or never shows.
class run_counts {
 public:
  explicit run_counts(std::size_t n) : c_(new std::atomic<std::uint8_t>[n]), n_(n) {
    for (std::size_t i = 0; i < n; ++i) c_[i].store(0, std::memory_order_relaxed);
  }
  void hit(std::size_t i) noexcept { c_[i].fetch_add(1, std::memory_order_relaxed); }
  // Describes the first id not run exactly once; empty when all are.
  std::string check() const {
    std::size_t never = 0, twice = 0, first = n_;
    for (std::size_t i = 0; i < n_; ++i) {
      const unsigned v = c_[i].load(std::memory_order_relaxed);
      if (v != 1) {
        if (first == n_) first = i;
        (v == 0 ? never : twice)++;
      }
    }
    if (first == n_) return {};
    return "task " + std::to_string(first) + " ran " + std::to_string(c_[first].load()) + " times; " +
           std::to_string(never) + " never ran, " + std::to_string(twice) + " ran more than once";
  }
  std::size_t size() const { return n_; }

 private:
  std::unique_ptr<std::atomic<std::uint8_t>[]> c_;
  std::size_t n_;
};

// ---------------------------------------------------------------------------------------------
// Millions of tiny tasks

// A task for the range [lo, hi): marks its id `lo`, then splits, spawning the upper half of each
// split as a new task. Range starts are distinct, so n tasks in all mark ids 0..n-1 once each.
std::uint64_t split_range(run_counts& runs, std::uint64_t lo, std::uint64_t hi);

std::uint64_t range_task(run_counts* runs, std::uint64_t lo, std::uint64_t hi) {
  runs->hit(lo);
  return split_range(*runs, lo, hi);
}

std::uint64_t split_range(run_counts& runs, std::uint64_t lo, std::uint64_t hi) {
  if (hi - lo == 1) return lo;
  const std::uint64_t mid = lo + (hi - lo) / 2;
  auto upper = heddle::task(range_task, &runs, mid, hi);
  const std::uint64_t lower = split_range(runs, lo, mid);
  return lower + *upper;
}

TEST(Stress, TenMillionTasksSpawnedFromInsideTasks) {
  const std::uint64_t n = scaled<std::uint64_t>(10'000'000, 3'000'000);
  watchdog dog("Stress.TenMillionTasksSpawnedFromInsideTasks", 300s);
  heddle::runtime rt(2);
  run_counts runs(n);
  const auto s0 = rt.stats();
  auto total = rt.task(range_task, &runs, std::uint64_t{0}, n);
  EXPECT_EQ(*total, n * (n - 1) / 2);
  EXPECT_EQ(runs.check(), "");
  const auto s1 = rt.stats();
  EXPECT_EQ(s1.spawned - s0.spawned, n - 1);
  EXPECT_EQ(s1.executed - s0.executed, n);
}

TEST(Stress, MillionsOfGroupTasksAndDroppedFuturesFromInsideTasks) {
  // Fire-and-forget shapes: task_group members and futures dropped unread, made inside tasks.
  const std::size_t chunks = scaled<std::size_t>(1000, 300), per_chunk = 2000;
  const std::size_t n = chunks * per_chunk;
  watchdog dog("Stress.MillionsOfGroupTasksAndDroppedFuturesFromInsideTasks", 300s);
  heddle::runtime rt(2);
  run_counts runs(n);
  std::atomic<std::size_t> dropped_done{0};
  auto root = rt.task([&] {
    heddle::task_group outer;
    for (std::size_t c = 0; c < chunks; ++c)
      outer.run([&, c] {
        const std::size_t base = c * per_chunk;
        if (c % 2 == 0) {
          heddle::task_group inner;
          for (std::size_t i = 0; i < per_chunk; ++i) inner.run([&runs, id = base + i] { runs.hit(id); });
          inner.wait();
        } else {
          for (std::size_t i = 0; i < per_chunk; ++i)
            (void)heddle::task([&runs, &dropped_done, id = base + i] {
              runs.hit(id);
              dropped_done.fetch_add(1, std::memory_order_release);
            });
        }
      });
    return outer.wait();
  });
  EXPECT_EQ(*root, heddle::task_group_status::complete);
  const std::size_t dropped = (chunks / 2) * per_chunk;
  while (dropped_done.load(std::memory_order_acquire) < dropped) std::this_thread::yield();
  EXPECT_EQ(runs.check(), "");
}

TEST(Stress, TenMillionTasksFromFourOutsideThreads) {
  const std::size_t n = scaled<std::size_t>(10'000'000, 2'000'000);
  constexpr int submitters = 4;
  const std::size_t per_thread = n / submitters;
  constexpr std::size_t batch = 4096;
  watchdog dog("Stress.TenMillionTasksFromFourOutsideThreads", 300s);
  heddle::runtime rt(2);
  run_counts runs(n);
  std::atomic<std::size_t> fire_and_forget_done{0};
  std::atomic<int> bad_values{0};
  const auto s0 = rt.stats();
  std::vector<std::thread> threads;
  for (int t = 0; t < submitters; ++t)
    threads.emplace_back([&, t] {
      const std::size_t base = t * per_thread;
      for (std::size_t start = 0; start < per_thread; start += batch) {
        const std::size_t end = std::min(per_thread, start + batch);
        switch (t) {
          case 0: {  // futures, forced one by one
            std::vector<heddle::future<std::size_t>> fs;
            fs.reserve(end - start);
            for (std::size_t i = start; i < end; ++i)
              fs.push_back(rt.task([&runs, id = base + i] {
                runs.hit(id);
                return id * 3;
              }));
            for (std::size_t i = start; i < end; ++i)
              if (*fs[i - start] != (base + i) * 3) bad_values++;
            break;
          }
          case 1: {  // futures dropped unread
            for (std::size_t i = start; i < end; ++i)
              (void)rt.task([&runs, &fire_and_forget_done, id = base + i] {
                runs.hit(id);
                fire_and_forget_done.fetch_add(1, std::memory_order_release);
              });
            break;
          }
          case 2: {  // a task group per batch
            heddle::task_group g(rt);
            for (std::size_t i = start; i < end; ++i) g.run([&runs, id = base + i] { runs.hit(id); });
            if (g.wait() != heddle::task_group_status::complete) bad_values++;
            break;
          }
          default: {  // futures gathered by when_all
            std::vector<heddle::future<std::size_t>> fs;
            fs.reserve(end - start);
            for (std::size_t i = start; i < end; ++i)
              fs.push_back(rt.task([&runs, id = base + i] {
                runs.hit(id);
                return id;
              }));
            auto all = heddle::when_all(std::move(fs));
            const auto& v = *all;
            for (std::size_t i = start; i < end; ++i)
              if (v[i - start] != base + i) bad_values++;
            break;
          }
        }
      }
    });
  for (auto& th : threads) th.join();
  while (fire_and_forget_done.load(std::memory_order_acquire) < per_thread) std::this_thread::yield();
  EXPECT_EQ(bad_values.load(), 0);
  EXPECT_EQ(runs.check(), "");
  const auto s1 = rt.stats();
  EXPECT_EQ(s1.injected - s0.injected, std::uint64_t{per_thread} * submitters);
}

TEST(Stress, DequeGrowsWhileThievesSteal) {
  // One task spawns far more children than a deque holds at first, without forcing any until all
  // are spawned: its deque grows again and again while the other workers steal from it.
  constexpr std::size_t n = scaled<std::size_t>(300'000, 100'000);
  watchdog dog("Stress.DequeGrowsWhileThievesSteal", 300s);
  heddle::runtime rt(3);
  run_counts runs(n);
  auto root = rt.task([&runs] {
    std::vector<heddle::future<std::size_t>> fs;
    fs.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      fs.push_back(heddle::task([&runs, i] {
        runs.hit(i);
        return i;
      }));
    std::size_t bad = 0;
    for (std::size_t i = n; i-- > 0;) bad += *fs[i] != i;  // forced from the end: mostly own pops
    return bad;
  });
  EXPECT_EQ(*root, 0u);
  EXPECT_EQ(runs.check(), "");
  EXPECT_GT(rt.stats().steals, 0u);
}

TEST(Stress, StatsReadWhileWorkRuns) {
  // stats() from another thread during a storm of spawns: counters only grow, and at the end they
  // add up.
  watchdog dog("Stress.StatsReadWhileWorkRuns", 300s);
  heddle::runtime rt(2);
  std::atomic<bool> done{false};
  std::atomic<int> backwards{0};
  std::thread poller([&] {
    heddle::runtime_stats last = rt.stats();
    while (!done.load()) {
      const heddle::runtime_stats s = rt.stats();
      if (s.spawned < last.spawned || s.executed < last.executed || s.steals < last.steals || s.parks < last.parks ||
          s.wakeups < last.wakeups || s.injected < last.injected)
        backwards++;
      last = s;
      std::this_thread::sleep_for(100us);
    }
  });
  const int n = scaled(27, 24);
  auto r = rt.task(task_fib, n);
  EXPECT_EQ(*r, serial_fib(n));
  done = true;
  poller.join();
  EXPECT_EQ(backwards.load(), 0);
  const auto s = rt.stats();
  EXPECT_EQ(s.executed, s.spawned + s.injected + s.express);
}

// ---------------------------------------------------------------------------------------------
// Random recursive spawn trees

// A node's value and children follow from its seed alone; its children are computed with one of
// several mechanisms, also picked by the seed.
struct tree_result {
  std::uint64_t checksum = 0;
  std::uint64_t nodes = 0;
  tree_result& operator+=(const tree_result& o) {
    checksum += o.checksum;
    nodes += o.nodes;
    return *this;
  }
};

struct tree_shape {
  static constexpr int max_depth = 13;
  static unsigned fanout(std::uint64_t seed, int depth) {
    if (depth == 0) return 4;
    return depth >= max_depth ? 0 : static_cast<unsigned>(mix(seed ^ 0x5151) % 5);
  }
  static std::uint64_t child_seed(std::uint64_t seed, unsigned k) { return mix(seed * 31 + k + 1); }
  static std::uint64_t own_value(std::uint64_t seed, int depth) { return mix(seed + 7) % 100'000 * (depth + 1); }
  static unsigned mechanism(std::uint64_t seed) { return static_cast<unsigned>(mix(seed ^ 0xabcd) % 5); }
};

tree_result serial_tree(std::uint64_t seed, int depth) {
  tree_result r{tree_shape::own_value(seed, depth), 1};
  for (unsigned k = 0; k < tree_shape::fanout(seed, depth); ++k)
    r += serial_tree(tree_shape::child_seed(seed, k), depth + 1);
  return r;
}

tree_result parallel_tree(std::uint64_t seed, int depth) {
  tree_result r{tree_shape::own_value(seed, depth), 1};
  const unsigned n = tree_shape::fanout(seed, depth);
  if (n == 0) return r;
  switch (tree_shape::mechanism(seed)) {
    case 0: {  // futures forced in reverse order
      std::vector<heddle::future<tree_result>> fs;
      for (unsigned k = 0; k < n; ++k)
        fs.push_back(heddle::task(parallel_tree, tree_shape::child_seed(seed, k), depth + 1));
      for (unsigned k = n; k-- > 0;) r += *fs[k];
      break;
    }
    case 1: {  // a task group writing into slots
      std::vector<tree_result> parts(n);
      heddle::task_group g;
      for (unsigned k = 0; k < n; ++k)
        g.run([&parts, seed, depth, k] { parts[k] = parallel_tree(tree_shape::child_seed(seed, k), depth + 1); });
      g.wait();
      for (auto& p : parts) r += p;
      break;
    }
    case 2: {  // when_all over a vector
      std::vector<heddle::future<tree_result>> fs;
      for (unsigned k = 0; k < n; ++k)
        fs.push_back(heddle::task(parallel_tree, tree_shape::child_seed(seed, k), depth + 1));
      for (auto& p : *heddle::when_all(std::move(fs))) r += p;
      break;
    }
    case 3: {  // each child through a continuation
      std::vector<heddle::future<tree_result>> fs;
      for (unsigned k = 0; k < n; ++k)
        fs.push_back(heddle::task([] { return 0; }).then([seed, depth, k](int) {
          return parallel_tree(tree_shape::child_seed(seed, k), depth + 1);
        }));
      for (auto& f : fs) r += *f;
      break;
    }
    default:  // the first child inline, the rest as futures
      std::vector<heddle::future<tree_result>> fs;
      for (unsigned k = 1; k < n; ++k)
        fs.push_back(heddle::task(parallel_tree, tree_shape::child_seed(seed, k), depth + 1));
      r += parallel_tree(tree_shape::child_seed(seed, 0), depth + 1);
      for (auto& f : fs) r += *f;
      break;
  }
  return r;
}

TEST(Stress, RandomSpawnTreesMatchSerial) {
  watchdog dog("Stress.RandomSpawnTreesMatchSerial", 300s);
  const int seeds = scaled(12, 6);
  std::uint64_t total_nodes = 0;
  for (unsigned workers : {1u, 2u, 3u}) {
    heddle::runtime rt(workers);
    for (int s = 0; s < seeds; ++s) {
      const std::uint64_t seed = mix(1000 + s);
      const tree_result expect = serial_tree(seed, 0);
      auto got = rt.task(parallel_tree, seed, 0);
      const tree_result& r = *got;
      EXPECT_EQ(r.checksum, expect.checksum) << "seed " << s << ", " << workers << " workers";
      EXPECT_EQ(r.nodes, expect.nodes) << "seed " << s << ", " << workers << " workers";
      total_nodes += expect.nodes;
    }
  }
  // From a foreign thread on the default runtime too.
  const tree_result expect = serial_tree(42, 0);
  auto got = heddle::task(parallel_tree, std::uint64_t{42}, 0);
  EXPECT_EQ(got->checksum, expect.checksum);
  EXPECT_EQ(got->nodes, expect.nodes);
  std::printf("[ info     ] %llu tree nodes in all\n", static_cast<unsigned long long>(total_nodes));
  EXPECT_GT(total_nodes, std::uint64_t(seeds) * 3 * 100);  // the trees are not trivial
}

// ---------------------------------------------------------------------------------------------
// Futures forced from foreign threads

TEST(Stress, FuturesForcedFromForeignThreads) {
  watchdog dog("Stress.FuturesForcedFromForeignThreads", 300s);
  heddle::runtime rt(2);
  constexpr int producers = 3, consumers = 3;
  const int per_producer = scaled(3000, 1500);
  // Producers make futures and hand them to consumers through a queue; consumers force them.
  std::mutex m;
  std::deque<std::pair<int, heddle::future<long>>> queue;
  std::atomic<int> produced_done{0}, bad{0}, consumed{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      std::mt19937 rng(p);
      for (int i = 0; i < per_producer; ++i) {
        const int n = static_cast<int>(rng() % 16);
        auto f = rt.task(task_fib, n);
        if (i % 3 == 0) {  // some are forced by their creator
          if (*f != serial_fib(n)) bad++;
          consumed++;
          continue;
        }
        std::lock_guard lock(m);
        queue.emplace_back(n, std::move(f));
      }
      produced_done++;
    });
  for (int c = 0; c < consumers; ++c)
    threads.emplace_back([&] {
      for (;;) {
        std::pair<int, heddle::future<long>> item;
        {
          std::lock_guard lock(m);
          if (!queue.empty()) {
            item = std::move(queue.front());
            queue.pop_front();
          } else if (produced_done.load() == producers) {
            return;
          }
        }
        if (!item.second.valid()) {
          std::this_thread::yield();
          continue;
        }
        if (item.second.get() != serial_fib(item.first)) bad++;
        consumed++;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(consumed.load(), producers * per_producer);
}

TEST(Stress, ForeignThreadsForceFuturesMadeInsideTasks) {
  // A task makes futures on its worker and returns them; outside threads force them while the
  // workers may still be running them.
  watchdog dog("Stress.ForeignThreadsForceFuturesMadeInsideTasks", 300s);
  heddle::runtime rt(2);
  const int rounds = scaled(300, 150);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        auto maker = rt.task([t, r] {
          std::vector<heddle::future<long>> fs;
          for (int k = 0; k < 8; ++k) fs.push_back(heddle::task(task_fib, (t + r + k) % 18));
          return fs;
        });
        std::vector<heddle::future<long>> fs = std::move(maker).get();
        for (int k = 0; k < 8; ++k)
          if (*fs[k] != serial_fib((t + r + k) % 18)) bad++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
