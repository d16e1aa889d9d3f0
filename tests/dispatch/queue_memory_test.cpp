// SPDX-License-Identifier: Apache-2.0
// What an idle serial queue costs: a million of them (fewer under the sanitizers) held in a
// std::vector, measured as the growth of the heap (glibc's mallinfo2, or the sanitizer allocator's
// count of live bytes), at most 128 bytes per queue with its 8-byte handle; and no task, no
// thread, nothing run for queues that never get an item.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include <heddle/dispatch.hpp>
#include <heddle/heddle.hpp>

#include "heddle/core/detail/sanitizers.hpp"

#if HEDDLE_DETAIL_ASAN || HEDDLE_DETAIL_TSAN
// The sanitizer runtimes' allocator statistics (sanitizer/allocator_interface.h, which GCC does
// not install).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

#include "dispatch_test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle::serial_queue;
using heddle_test::scaled;
using heddle_test::watchdog;

// Bytes of heap in use now: glibc's view in a plain build (chunk headers and rounding included),
// the sanitizer allocator's (the requested sizes) in a sanitizer build, where malloc is not glibc's.
std::size_t heap_in_use() {
#if HEDDLE_DETAIL_ASAN || HEDDLE_DETAIL_TSAN
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;  // small chunks, and the vector's mmapped block
#endif
}

constexpr double max_bytes_per_queue = 128;

struct measured {
  double bytes_per_queue;
  heddle::runtime_stats before, after;
  int threads_before, threads_after;
};

// Makes n idle queues with the given label in a vector and measures them; destroys them before
// returning.
measured measure(heddle::runtime& rt, std::size_t n, const std::string& label) {
  measured m{};
  m.before = rt.stats();
  m.threads_before = heddle_test::thread_count();
  const std::size_t heap_before = heap_in_use();
  {
    std::vector<serial_queue> queues;
    queues.reserve(n);
    for (std::size_t i = 0; i < n; ++i) queues.emplace_back(rt, label);
    const std::size_t heap_after = heap_in_use();
    m.bytes_per_queue = heap_after > heap_before
                            ? static_cast<double>(heap_after - heap_before) / static_cast<double>(n)
                            : 0;
    m.threads_after = heddle_test::thread_count();
    m.after = rt.stats();
  }
  return m;
}

void expect_nothing_ran(const measured& m) {
  EXPECT_EQ(m.after.spawned, m.before.spawned);
  EXPECT_EQ(m.after.injected, m.before.injected);
  EXPECT_EQ(m.after.express, m.before.express);
  EXPECT_EQ(m.after.executed, m.before.executed);
  EXPECT_EQ(m.threads_after, m.threads_before);
}

TEST(QueueMemory, AMillionIdleQueues) {
  watchdog dog("QueueMemory.AMillionIdleQueues", 120s);
  heddle::runtime rt(2);
  const std::size_t n = scaled<std::size_t>(1'000'000, 100'000);
  const std::size_t heap_start = heap_in_use();
  const measured m = measure(rt, n, "");
  std::printf(
      "[ measured ] %zu idle serial queues, no label: %.1f heap bytes per queue, handle in a std::vector included\n", n,
      m.bytes_per_queue);
  RecordProperty("bytes_per_idle_queue", std::to_string(m.bytes_per_queue));
  EXPECT_GT(m.bytes_per_queue, 8.0);  // the measurement saw the queues at all
  EXPECT_LE(m.bytes_per_queue, max_bytes_per_queue);
  expect_nothing_ran(m);
  // Destroyed, they gave their memory back (slack for the allocator's own bookkeeping).
  EXPECT_LE(heap_in_use(), heap_start + 256 * 1024);
  EXPECT_EQ(heddle_test::thread_count(), m.threads_before);
}

// With a short label (stored after the record, in the same allocation).
TEST(QueueMemory, IdleQueuesWithShortLabels) {
  watchdog dog("QueueMemory.IdleQueuesWithShortLabels", 120s);
  heddle::runtime rt(2);
  const std::size_t n = scaled<std::size_t>(200'000, 50'000);
  const measured m = measure(rt, n, "sensor-0001");
  std::printf("[ measured ] %zu idle serial queues, 11-character label: %.1f heap bytes per queue\n", n,
              m.bytes_per_queue);
  EXPECT_LE(m.bytes_per_queue, max_bytes_per_queue);
  expect_nothing_ran(m);
}

// Idle children of one target: they cost no task either, and the target stays idle.
TEST(QueueMemory, IdleChildrenOfATarget) {
  watchdog dog("QueueMemory.IdleChildrenOfATarget", 120s);
  heddle::runtime rt(2);
  serial_queue target(rt, "target");
  const std::size_t n = scaled<std::size_t>(100'000, 20'000);
  const auto before = rt.stats();
  const int threads = heddle_test::thread_count();
  {
    std::vector<serial_queue> children;
    children.reserve(n);
    for (std::size_t i = 0; i < n; ++i) children.emplace_back("child", target);
    const auto after = rt.stats();
    EXPECT_EQ(after.injected, before.injected);
    EXPECT_EQ(after.spawned, before.spawned);
    EXPECT_EQ(after.executed, before.executed);
    EXPECT_EQ(heddle_test::thread_count(), threads);
  }
  // The target works as before, inline (it is idle and owned by nobody).
  const auto me = std::this_thread::get_id();
  EXPECT_TRUE(target.sync([&] { return std::this_thread::get_id() == me; }));
}

// A queue that did run items goes back to costing nothing on the scheduler: once idle, no task
// is left for it (the stats stop moving) and no thread was added.
TEST(QueueMemory, QueuesGoIdleAgainAfterWork) {
  watchdog dog("QueueMemory.QueuesGoIdleAgainAfterWork", 120s);
  heddle::runtime rt(2);
  const int threads = heddle_test::thread_count();
  std::vector<serial_queue> queues;
  for (int i = 0; i < 1000; ++i) queues.emplace_back(rt, "worked");
  std::atomic<int> ran{0};
  for (auto& q : queues)
    for (int k = 0; k < 3; ++k) q.async([&] { ran++; });
  ASSERT_TRUE(heddle_test::eventually([&] { return ran.load() == 3000; }));
  // Let the batches finish releasing their queues, then the counters must stay still.
  std::this_thread::sleep_for(50ms);
  const auto settled = rt.stats();
  std::this_thread::sleep_for(50ms);
  const auto later = rt.stats();
  EXPECT_EQ(later.executed, settled.executed);
  EXPECT_EQ(later.injected, settled.injected);
  EXPECT_EQ(heddle_test::thread_count(), threads);
  // Every queue is idle: sync runs inline on this thread.
  const auto me = std::this_thread::get_id();
  int inline_runs = 0;
  for (auto& q : queues) inline_runs += q.sync([&] { return std::this_thread::get_id() == me; });
  EXPECT_EQ(inline_runs, 1000);
}

}  // namespace
