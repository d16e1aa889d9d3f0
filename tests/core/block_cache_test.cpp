// SPDX-License-Identifier: Apache-2.0
// Task records come from per-worker magazines and a process-wide depot (block_cache.hpp): bulk
// spawns far beyond one magazine, records that cross threads in every direction, and memory that
// stays bounded when bursts repeat.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <latch>
#include <thread>
#include <vector>

#include "heddle/async/promise.hpp"
#include "test_support.hpp"

namespace {

using heddle_test::scaled;

// The record sizes docs/core.md gives as examples ("Task records are ..."): which block each takes.
namespace record_sizes {
namespace hd = heddle::core_detail;
using three_words = decltype([a = 0L, b = 0L, c = 0L] { (void)(a + b + c); });
static_assert(sizeof(hd::task_state<long, long (*)(int), int>) == 72 &&
                  hd::size_class_of(sizeof(hd::task_state<long, long (*)(int), int>)) == 1,
              "heddle::task(fib, n): 72 bytes, a 128-byte block");
static_assert(hd::size_class_of(sizeof(hd::task_state<void, void (*)()>)) == 0,
              "heddle::task(f) for a void(*)(): one 64-byte block");
static_assert(hd::size_class_of(sizeof(hd::group_task<three_words>)) == 0,
              "a task_group task whose lambda captures three words: one 64-byte block");
static_assert(hd::class_bytes(0) == 64 && hd::class_bytes(hd::num_size_classes - 1) == 512 &&
                  hd::magazine_blocks == 128,
              "blocks of 64 to 512 bytes, magazines of 128 (docs/core.md)");
}  // namespace record_sizes

// One task spawns every other one in bulk: tens of thousands of live records per worker. With
// `hold`, no task finishes before the last is spawned, so every record is live at once: the peak.
void bulk_round(heddle::runtime& rt, std::vector<std::uint32_t>& ran, bool hold) {
  std::atomic<bool> spawned{!hold};
  rt.task([&] {
      heddle::task_group g;
      for (std::size_t i = 0; i < ran.size(); ++i)
        g.run([&ran, &spawned, i] {
          while (!spawned.load(std::memory_order_acquire)) std::this_thread::yield();
          ++ran[i];
        });
      spawned.store(true, std::memory_order_release);
      g.wait();
    }).get();
}

TEST(BlockCache, BulkSpawnsRunEveryTaskOnceAndReuseTheirBlocks) {
  heddle_test::watchdog dog("bulk spawns", std::chrono::seconds(120));
  heddle::runtime rt(2);
  std::vector<std::uint32_t> ran(scaled<std::size_t>(300'000, 40'000), 0);
  bulk_round(rt, ran, true);  // the peak: every record live at once, the slabs carved for it
  const std::size_t slabs_at_peak = heddle::core_detail::depot_slabs();
  const int rounds = 20;
  for (int r = 2; r <= rounds; ++r) bulk_round(rt, ran, false);
  for (std::size_t i = 0; i < ran.size(); ++i) ASSERT_EQ(ran[i], std::uint32_t(rounds)) << "task " << i;
  // No later burst has more live records than the peak, so none needs new slabs. Slack: the blocks
  // that sit in the workers' magazines and the depot's loose list (under two slabs here).
  EXPECT_LE(heddle::core_detail::depot_slabs(), slabs_at_peak + 4) << "blocks are not reused between bursts";
}

// Records made on workers and released on outside threads (futures dropped there), and records made
// on outside threads and released on workers (tasks whose futures are dropped at once): both
// directions at once, many rounds, every value checked.
TEST(BlockCache, RecordsCrossBetweenWorkersAndOutsideThreads) {
  heddle_test::watchdog dog("records crossing threads", std::chrono::seconds(120));
  heddle::runtime rt(2);
  const int per_thread = scaled(20'000, 3'000);
  std::atomic<long> dropped_ran{0};
  std::vector<std::thread> outside;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    outside.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        // Made on a worker (inside the outer task), released here.
        heddle::future<heddle::future<long>> outer = rt.task([t, i] {
          return heddle::task([t, i] { return long(t) * 1'000'000 + i; });
        });
        heddle::future<long> inner = std::move(*outer);
        if (*inner != long(t) * 1'000'000 + i) failures.fetch_add(1);
        // Made here, released by the worker that runs it.
        (void)rt.task([&dropped_ran] { dropped_ran.fetch_add(1, std::memory_order_relaxed); });
      }
    });
  for (auto& th : outside) th.join();
  rt.task([] {}).get();  // tasks run in no particular order: wait for the dropped ones explicitly
  while (dropped_ran.load() != 4L * per_thread) std::this_thread::yield();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(dropped_ran.load(), 4L * per_thread);
}

// Outside threads keep caches of their own, returned to the depot when they end: wave after wave
// of short-lived threads, each holding thousands of records at once (promises, completed and read
// on the thread itself; every thread's records are live together at a latch, so that every wave's
// peak is the same), reuse the blocks the last wave's threads gave back instead of carving new slabs.
TEST(BlockCache, OutsideThreadsReturnTheirCachesWhenTheyEnd) {
  heddle_test::watchdog dog("outside thread caches", std::chrono::seconds(120));
  const int threads = 8, per_thread = scaled(2'000, 500), waves = 12;
  std::atomic<int> failures{0};
  auto wave = [&] {
    std::latch all_live(threads);
    std::vector<std::thread> outside;
    for (int t = 0; t < threads; ++t)
      outside.emplace_back([&, t] {
        std::vector<heddle::promise<long>> promises(static_cast<std::size_t>(per_thread));
        std::vector<heddle::future<long>> futures;
        for (auto& p : promises) futures.push_back(p.get_future());
        all_live.arrive_and_wait();
        for (int i = 0; i < per_thread; ++i) promises[static_cast<std::size_t>(i)].set_value(long(t) * 100'000 + i);
        for (int i = 0; i < per_thread; ++i)
          if (futures[static_cast<std::size_t>(i)].get() != long(t) * 100'000 + i) failures.fetch_add(1);
      });
    for (auto& th : outside) th.join();
  };
  wave();
  const std::size_t slabs = heddle::core_detail::depot_slabs();
  for (int w = 1; w < waves; ++w) wave();
  EXPECT_EQ(failures.load(), 0);
  // Slack: blocks left loose in the depot (fewer than a magazine per class) between waves.
  EXPECT_LE(heddle::core_detail::depot_slabs(), slabs + 2) << "ended threads' blocks are not reused";
}

// Records of every size class (64 to 512 bytes) and one bigger than any, made and freed together.
template <std::size_t Bytes>
struct payload {
  unsigned char bytes[Bytes];
};

template <std::size_t Bytes>
long sum_of(const payload<Bytes>& p) {
  long s = 0;
  for (unsigned char b : p.bytes) s += b;
  return s;
}

template <std::size_t Bytes>
heddle::future<long> sized_task(unsigned char fill) {
  payload<Bytes> p;
  for (auto& b : p.bytes) b = fill;
  return heddle::task([p] { return sum_of(p); });
}

TEST(BlockCache, EverySizeClassAndOversizedRecords) {
  heddle::runtime rt(2);
  const long total = rt.task([] {
                         long s = 0;
                         for (int round = 0; round < scaled(2'000, 300); ++round) {
                           const auto fill = static_cast<unsigned char>(round);
                           auto a = sized_task<8>(fill);
                           auto b = sized_task<100>(fill);
                           auto c = sized_task<200>(fill);
                           auto d = sized_task<400>(fill);
                           auto e = sized_task<2000>(fill);
                           s += (*a - 8L * fill) + (*b - 100L * fill) + (*c - 200L * fill) + (*d - 400L * fill) +
                                (*e - 2000L * fill);
                         }
                         return s;
                       }).get();
  EXPECT_EQ(total, 0);
}

}  // namespace
