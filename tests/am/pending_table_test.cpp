// SPDX-License-Identifier: Apache-2.0
// The engine's table of calls waiting for their replies (src/am/pending_table.hpp): slots claimed
// and freed with atomics, an overflow map when a slot is busy. Every call inserted is taken exactly
// once, by the reply or by a peer's loss, however the two race; a reply from another node than the
// one called takes nothing.
#include "pending_table.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace {

using heddle::offload::node_id;
using heddle::am_detail::pending_call;
using heddle::am_detail::pending_table;

// A call that counts how often it was completed or failed (exactly once is right).
struct counted_call final : pending_call {
  std::atomic<int> outcomes{0};
  void complete(std::span<const std::byte>) noexcept override { outcomes.fetch_add(1); }
  void fail(std::exception_ptr) noexcept override { outcomes.fetch_add(1); }
};

TEST(PendingTable, TakesEachCallOnceAndOnlyFromItsNode) {
  auto table = std::make_unique<pending_table>();
  counted_call a, b;
  table->insert(1, 2, &a);
  table->insert(1 + 1024, 3, &b);  // the same slot: waits in the overflow map
  EXPECT_EQ(table->find(1, 2), &a);
  EXPECT_EQ(table->find(1, 3), nullptr);
  EXPECT_EQ(table->take(1, 3), nullptr) << "a reply from node 3 to a call to node 2";
  EXPECT_EQ(table->take(1025, 2), nullptr);
  EXPECT_EQ(table->take(1, 2), &a);
  EXPECT_EQ(table->take(1, 2), nullptr) << "taken twice";
  EXPECT_EQ(table->find(1025, 3), &b);
  EXPECT_EQ(table->take(1025, 3), &b);
  EXPECT_EQ(table->take(1025, 3), nullptr);
  EXPECT_EQ(table->take(77, 0), nullptr) << "an id nobody inserted";
}

TEST(PendingTable, TakeAllTakesTheNodesCallsInSlotsAndOverflow) {
  auto table = std::make_unique<pending_table>();
  std::vector<counted_call> calls(3000);
  for (std::uint64_t i = 0; i < calls.size(); ++i) table->insert(i + 1, static_cast<node_id>(i % 3), &calls[i]);
  const auto of_node1 = table->take_all(1, false);
  EXPECT_EQ(of_node1.size(), 1000u);
  for (pending_call* p : of_node1)
    EXPECT_EQ((static_cast<std::size_t>(static_cast<counted_call*>(p) - calls.data()) % 3), 1u);
  EXPECT_EQ(table->take_all(0, true).size(), 2000u);
  for (std::uint64_t i = 0; i < calls.size(); ++i) EXPECT_EQ(table->take(i + 1, static_cast<node_id>(i % 3)), nullptr);
}

// Callers on several threads insert calls to four nodes, a "polling thread" takes their replies in
// a scrambled order, and a "loss" sweeps node 3's calls while they come and go: every call must be
// taken exactly once (the sweep takes what the replies miss, and a final sweep the rest), never
// twice. Overflow happens: more calls are in flight than slots.
TEST(PendingTable, RacingInsertsRepliesAndSweepsTakeEveryCallOnce) {
  auto table = std::make_unique<pending_table>();
  constexpr int callers = 4;
  constexpr std::uint64_t per_caller = 20000;
  std::vector<counted_call> calls(callers * per_caller);
  std::atomic<std::uint64_t> next_id{1};
  // Inserted ids, published for the replier: slot k holds the id of call k once inserted.
  std::vector<std::atomic<std::uint64_t>> ids(calls.size());
  std::atomic<int> inserting{callers};
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c)
    threads.emplace_back([&, c] {
      for (std::uint64_t i = 0; i < per_caller; ++i) {
        const std::size_t k = c * per_caller + i;
        const std::uint64_t id = next_id.fetch_add(1);
        table->insert(id, static_cast<node_id>(k % 4), &calls[k]);
        ids[k].store(id, std::memory_order_release);
      }
      inserting.fetch_sub(1);
    });
  std::atomic<std::uint64_t> taken_by_replies{0}, taken_by_sweeps{0};
  threads.emplace_back([&] {  // replies, in a stride order that leaves many calls in flight
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t start = 0; start < 7; ++start)
        for (std::size_t k = start; k < calls.size(); k += 7) {
          std::uint64_t id;
          while ((id = ids[k].load(std::memory_order_acquire)) == 0) std::this_thread::yield();
          if (pending_call* p = table->take(id, static_cast<node_id>(k % 4))) {
            p->complete({});
            taken_by_replies.fetch_add(1);
          }
        }
  });
  threads.emplace_back([&] {  // node 3 lost, swept again and again while calls are inserted
    while (inserting.load() > 0)
      for (pending_call* p : table->take_all(3, false)) {
        p->fail(nullptr);
        taken_by_sweeps.fetch_add(1);
      }
  });
  for (auto& t : threads) t.join();
  for (pending_call* p : table->take_all(0, true)) {
    p->fail(nullptr);
    taken_by_sweeps.fetch_add(1);
  }
  EXPECT_EQ(taken_by_replies.load() + taken_by_sweeps.load(), calls.size());
  for (std::size_t k = 0; k < calls.size(); ++k) ASSERT_EQ(calls[k].outcomes.load(), 1) << "call " << k;
}

}  // namespace
