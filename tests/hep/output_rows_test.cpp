// SPDX-License-Identifier: Apache-2.0
// hep::event_order: rows added by many threads in any order come out block by block, in begin
// order, each block's events sorted, with the jet rows numbered on; a block that ends early waits
// for those begun before it. A stress test with checked results (run under ThreadSanitizer too).
#include <gtest/gtest.h>
#include <reproduce.hpp>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "core/output_rows.hpp"

namespace {

hep::selected_event event_of(std::uint32_t run, std::uint32_t lumi, std::uint64_t n) {
  hep::selected_event e;
  e.row.run = run;
  e.row.lumi = lumi;
  e.row.event = n;
  e.jets.resize(n % 4, hep::jet_row{n});
  e.fat_jets.resize(n % 2, hep::fat_jet_row{n});
  return e;
}

TEST(EventOrder, BlocksComeOutInBeginOrderSortedAndNumbered) {
  hep::event_order order;
  order.begin_block(1, 1);
  order.begin_block(1, 2);
  order.add(event_of(1, 2, 7));
  order.add(event_of(1, 1, 3));
  order.add(event_of(1, 1, 1));
  order.skip(1, 1);
  EXPECT_TRUE(order.end_block(1, 2).empty());  // 1:1 is still open: 1:2 waits
  const auto ready = order.end_block(1, 1);
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].lumi, 1u);
  EXPECT_EQ(ready[0].events_seen, 3u);
  ASSERT_EQ(ready[0].events.size(), 2u);
  EXPECT_EQ(ready[0].events[0].row.event, 1u);
  EXPECT_EQ(ready[0].events[1].row.event, 3u);
  EXPECT_EQ(ready[0].events[0].row.first_jet, 0u);
  EXPECT_EQ(ready[0].events[1].row.first_jet, 1u);      // event 1 has one jet
  EXPECT_EQ(ready[1].events[0].row.first_jet, 4u);      // event 3 has three
  EXPECT_EQ(ready[1].events[0].row.first_fat_jet, 2u);  // events 1 and 3 have one each
  EXPECT_EQ(order.open_blocks(), 0u);
}

TEST(EventOrder, MisuseIsAnError) {
  hep::event_order order;
  EXPECT_THROW(order.add(event_of(1, 1, 0)), std::logic_error);
  EXPECT_THROW((void)order.end_block(1, 1), std::logic_error);
  order.begin_block(1, 1);
  EXPECT_THROW(order.begin_block(1, 1), std::logic_error);
}

// Threads add the events of several open blocks in a shuffled order while blocks end in a
// shuffled order too; every event comes out once, blocks in begin order, events sorted, and the
// jet rows numbered without gap.
TEST(EventOrder, ConcurrentAddsInAnyOrder) {
#ifdef HEDDLE_TEST_SANITIZED
  constexpr std::uint64_t per_block = 200;
#else
  constexpr std::uint64_t per_block = 3000;
#endif
  constexpr std::uint32_t blocks = 6;
  constexpr int threads = 4;
  hep::event_order order;
  for (std::uint32_t b = 1; b <= blocks; ++b) order.begin_block(1, b);
  std::vector<std::uint64_t> all(blocks * per_block);
  for (std::uint64_t i = 0; i < all.size(); ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), std::mt19937_64(heddle_test::seed("order", 7)));
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < all.size();) {
        const std::uint64_t n = all[i];
        const auto lumi = static_cast<std::uint32_t>(n / per_block + 1);
        if (n % 5 == 0) order.skip(1, lumi);
        else order.add(event_of(1, lumi, n));
      }
    });
  for (std::thread& t : pool) t.join();
  std::vector<hep::block_rows> out;
  for (std::uint32_t b : {3u, 1u, 2u, 6u, 5u, 4u})
    for (hep::block_rows& r : order.end_block(1, b)) out.push_back(std::move(r));
  ASSERT_EQ(out.size(), blocks);
  std::uint64_t expected_event = 0, jets = 0, fat = 0;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    EXPECT_EQ(out[b].lumi, b + 1);
    EXPECT_EQ(out[b].events_seen, per_block);
    for (const hep::selected_event& e : out[b].events) {
      if (expected_event % 5 == 0) ++expected_event;  // skipped
      EXPECT_EQ(e.row.event, expected_event);
      EXPECT_EQ(e.row.first_jet, jets);
      EXPECT_EQ(e.row.first_fat_jet, fat);
      jets += e.jets.size();
      fat += e.fat_jets.size();
      ++expected_event;
    }
  }
  EXPECT_EQ(expected_event, blocks * per_block);  // the last event (n % 5 == 4) was selected
}

}  // namespace
