// SPDX-License-Identifier: Apache-2.0
// The work-stealing deque on its own: one owner pushing and popping against several thieves, more
// threads than cores. Every element must be taken exactly once (none lost, none duplicated), and the
// owner's race with a thief for the last element must actually be run, many times, in both
// outcomes: that is the path a wrong memory order breaks. Under ThreadSanitizer this is also the
// check of the deque's orders (its atomics are annotated through seq_cst accesses, not fences).
#include <gtest/gtest.h>

#include <heddle/core/detail/work_stealing_deque.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace deque_test {
namespace {

using heddle::core_detail::task_base;
using heddle::core_detail::work_stealing_deque;
using namespace std::chrono_literals;

// The deque only stores pointers; the records are there to be told apart. (A task_base holds an
// atomic, so no std::vector of them.)
class records {
 public:
  explicit records(std::size_t n) : n_(n), p_(std::allocator<task_base>().allocate(n)) {
    for (std::size_t i = 0; i < n; ++i) std::construct_at(p_ + i, nullptr);
  }
  ~records() {
    std::destroy_n(p_, n_);
    std::allocator<task_base>().deallocate(p_, n_);
  }
  records(const records&) = delete;
  records& operator=(const records&) = delete;
  task_base* operator[](std::size_t i) const noexcept { return p_ + i; }
  std::uint32_t index(const task_base* t) const noexcept { return static_cast<std::uint32_t>(t - p_); }
  std::size_t size() const noexcept { return n_; }

 private:
  std::size_t n_;
  task_base* p_;
};

struct outcome {
  std::vector<std::uint32_t> taken_by_owner;
  std::vector<std::vector<std::uint32_t>> taken_by_thief;
  work_stealing_deque::last_element_tally tally;
  std::uint64_t contended_steals = 0;
  std::size_t pushed = 0;
};

// The owner pushes a burst (1 to max_burst), then pops a random part of it, sometimes everything:
// single-element bursts and pops down to empty put the owner in the last-element race again and
// again; before popping a single element it waits a moment, so that thieves see it. It stops after
// `elements`, or once `enough_lost` last-element races went to a thief and `min_elements` were
// pushed. (How often a thief wins depends on the threads running at the same moment, which a loaded
// machine decides: hence a number of races rather than of elements.)
outcome run(unsigned thieves, std::size_t min_elements, std::size_t elements, std::size_t log2_capacity,
            unsigned max_burst, std::uint64_t enough_lost) {
  records recs(elements);
  auto index = [&](task_base* t) { return recs.index(t); };
  work_stealing_deque dq(log2_capacity);
  outcome out;
  out.taken_by_thief.resize(thieves);
  std::atomic<bool> owner_done{false};
  std::atomic<std::uint64_t> contended{0};

  std::vector<std::thread> ts;
  for (unsigned k = 0; k < thieves; ++k)
    ts.emplace_back([&, k] {
      std::uint64_t my_contended = 0;
      auto& mine = out.taken_by_thief[k];
      for (;;) {
        task_base* t = nullptr;
        const auto r = dq.steal(t);
        if (r == work_stealing_deque::steal_result::success) {
          mine.push_back(index(t));
        } else if (r == work_stealing_deque::steal_result::contended) {
          ++my_contended;
        } else if (owner_done.load(std::memory_order_acquire)) {
          if (dq.looks_empty()) break;  // the owner drained what was left; nothing is pushed any more
        }
      }
      contended.fetch_add(my_contended);
    });

  std::mt19937 rng(thieves * 7919 + static_cast<unsigned>(log2_capacity));
  std::size_t next = 0;
  while (next < elements && (next < min_elements || out.tally.lost < enough_lost)) {
    const unsigned burst = 1 + rng() % max_burst;
    for (unsigned i = 0; i < burst && next < elements; ++i) dq.push(recs[next++]);
    if (burst == 1) heddle_test::spin_work(rng() % 64);
    const bool drain = rng() % 4 == 0;
    const unsigned pops = drain ? ~0u : rng() % (burst + 1);
    for (unsigned i = 0; i < pops; ++i) {
      task_base* t = dq.pop(&out.tally);
      if (!t) break;
      out.taken_by_owner.push_back(index(t));
    }
  }
  while (task_base* t = dq.pop(&out.tally)) out.taken_by_owner.push_back(index(t));
  owner_done.store(true, std::memory_order_release);
  for (auto& t : ts) t.join();
  out.contended_steals = contended.load();
  out.pushed = next;
  return out;
}

void check_exactly_once(const outcome& o) {
  std::vector<std::uint8_t> seen(o.pushed, 0);
  std::size_t duplicates = 0, total = 0;
  auto mark = [&](const std::vector<std::uint32_t>& v) {
    for (std::uint32_t i : v) {
      ASSERT_LT(i, o.pushed);
      if (seen[i]++) ++duplicates;
      ++total;
    }
  };
  mark(o.taken_by_owner);
  for (auto& v : o.taken_by_thief) mark(v);
  std::size_t lost = 0;
  for (auto c : seen) lost += c == 0;
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(total, o.pushed);
}

void report(const char* what, const outcome& o) {
  std::size_t stolen = 0;
  for (auto& v : o.taken_by_thief) stolen += v.size();
  std::printf("[ info     ] %s: %zu elements, %zu popped, %zu stolen, last element won %llu / lost %llu times, "
              "%llu contended steals\n",
              what, o.pushed, o.taken_by_owner.size(), stolen, static_cast<unsigned long long>(o.tally.won),
              static_cast<unsigned long long>(o.tally.lost), static_cast<unsigned long long>(o.contended_steals));
}

// 4 thieves and the owner on a 2-core machine: threads are preempted inside the race windows.
TEST(WorkStealingDeque, EveryElementTakenOnceAgainstThieves) {
  heddle_test::watchdog dog("WorkStealingDeque.EveryElementTakenOnceAgainstThieves", 120s);
  const auto o = run(4, heddle_test::scaled<std::size_t>(1'000'000, 50'000),
                     heddle_test::scaled<std::size_t>(100'000'000, 10'000'000), 10, 4,
                     heddle_test::scaled<std::uint64_t>(200, 20));
  report("4 thieves", o);
  check_exactly_once(o);
  // The last-element race was run in both outcomes (on a quiet machine 200 thief wins take about
  // 1.5 million elements).
  EXPECT_GT(o.tally.won, 1000u);
  EXPECT_GT(o.tally.lost, 0u);
}

// A ring of 4 slots that grows while thieves read the old one: growth hands every element over.
TEST(WorkStealingDeque, GrowingUnderSteals) {
  const std::size_t n = heddle_test::scaled<std::size_t>(1'000'000, 100'000);
  const auto o = run(3, n, n, 2, 300, 0);
  report("3 thieves, growing from 4 slots", o);
  check_exactly_once(o);
  EXPECT_GT(o.tally.won, 0u);
}

// Without thieves the owner's order is last in, first out, and the last element is always won.
TEST(WorkStealingDeque, OwnerAloneIsLifo) {
  records recs(3000);
  work_stealing_deque dq(2);
  work_stealing_deque::last_element_tally tally;
  for (std::size_t i = 0; i < recs.size(); ++i) dq.push(recs[i]);
  for (std::size_t i = recs.size(); i-- > 0;) ASSERT_EQ(dq.pop(&tally), recs[i]);
  EXPECT_EQ(dq.pop(&tally), nullptr);
  EXPECT_EQ(tally.won, 1u);
  EXPECT_EQ(tally.lost, 0u);
  // Thieves take from the other end, first in, first out.
  for (std::size_t i = 0; i < recs.size(); ++i) dq.push(recs[i]);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    task_base* t = nullptr;
    ASSERT_EQ(dq.steal(t), work_stealing_deque::steal_result::success);
    ASSERT_EQ(t, recs[i]);
  }
  task_base* t = nullptr;
  EXPECT_EQ(dq.steal(t), work_stealing_deque::steal_result::empty);
}

}  // namespace

}  // namespace deque_test
