// SPDX-License-Identifier: Apache-2.0
// The trace of serial queues: each drain a span under the queue's label with the items it ran
// (counted exactly against the items enqueued), and flows from enqueue to run for the sampled
// items (every one at sampling 1; about one in N, never none of many, at sampling N).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <heddle/core/trace.hpp>
#include <heddle/dispatch.hpp>
#include <heddle/heddle.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "trace_reader.hpp"

namespace trace_test {
namespace {

using heddle_test::trace_file;

std::size_t items_in_drains(const trace_file& t, const std::string& label) {
  std::size_t n = 0;
  for (auto& e : t.select("X", "dispatch", label)) n += e.at("args").at("items").get<std::size_t>();
  return n;
}

// `items` items from two outside threads and the runtime's workers onto one labelled queue.
void fill(heddle::runtime& rt, heddle::serial_queue& q, int items, std::atomic<int>& ran) {
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p)
    producers.emplace_back([&] {
      for (int i = 0; i < items / 4; ++i) q.async([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    });
  rt.execute([&] {
    heddle::task_group g;
    for (int i = 0; i < items / 2; ++i) g.run([&] { q.async([&] { ran.fetch_add(1, std::memory_order_relaxed); }); });
    g.wait();
  });
  for (auto& t : producers) t.join();
  q.sync([] {});  // every item before it has run
}

TEST(DispatchTrace, DrainsCountEveryItemAndEveryItemFlowsAtSamplingOne) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("every.json");
  heddle::runtime rt({.threads = 2});
  const int items = heddle_test::scaled(4000, 800);
  std::atomic<int> ran{0};
  heddle::serial_queue q(rt, "orders");
  heddle::trace::options o;
  o.queue_item_sampling = 1;
  heddle::trace::start(path, o);
  fill(rt, q, items, ran);
  heddle::trace::stop();
  EXPECT_EQ(ran.load(), items);
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  // The sync item runs in a drain too, unless sync() ran it inline on an idle queue.
  const std::size_t drained = items_in_drains(t, "orders");
  EXPECT_GE(drained, static_cast<std::size_t>(items));
  EXPECT_LE(drained, static_cast<std::size_t>(items) + 1);
  EXPECT_EQ(t.count("f", "flow", "queue item"), drained);
  EXPECT_EQ(t.count("s", "flow", "queue item"), drained);
  std::filesystem::remove(path);
}

TEST(DispatchTrace, SampledFlowsAreAboutOneInN) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("sampled.json");
  heddle::runtime rt({.threads = 2});
  const int items = heddle_test::scaled(8000, 1600);
  std::atomic<int> ran{0};
  heddle::serial_queue q(rt, "sampled");
  heddle::trace::options o;
  o.queue_item_sampling = 16;
  heddle::trace::start(path, o);
  fill(rt, q, items, ran);
  heddle::trace::stop();
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  EXPECT_GE(items_in_drains(t, "sampled"), static_cast<std::size_t>(items));
  // Item records come from per-thread blocks: their addresses are spread, and so is the hash.
  const std::size_t flows = t.count("f", "flow", "queue item");
  EXPECT_GT(flows, static_cast<std::size_t>(items) / 64) << "1 in 16 sampled: " << flows << " of " << items;
  EXPECT_LT(flows, static_cast<std::size_t>(items) / 4) << "1 in 16 sampled: " << flows << " of " << items;
  EXPECT_EQ(t.count("s", "flow", "queue item"), flows);
  std::filesystem::remove(path);
}

TEST(DispatchTrace, SamplingMustBeAPowerOfTwo) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  heddle::trace::options o;
  o.queue_item_sampling = 12;
  try {
    heddle::trace::start(heddle_test::trace_path("bad.json"), o);
    ADD_FAILURE() << "sampling 12 accepted";
    heddle::trace::stop();
  } catch (const heddle::trace::trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(heddle::trace::active());
}

}  // namespace

}  // namespace trace_test
