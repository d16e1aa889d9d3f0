// SPDX-License-Identifier: Apache-2.0
// heddle::per_worker: a slot per worker and per outside thread, made on first use; combine,
// combine_each, iteration, clear; explicit runtimes; workers of another runtime; stress.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <heddle/core.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::watchdog;

TEST(PerWorker, NothingMadeUntilUsed) {
  heddle::runtime rt(2);
  heddle::per_worker<long> p(rt, 5L);
  EXPECT_EQ(p.size(), 0u);
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(p.begin(), p.end());
  // combine of nothing: a value made as a slot would be (the exemplar here).
  EXPECT_EQ(p.combine(std::plus<>{}), 5L);
  heddle::per_worker<long> q(rt);
  EXPECT_EQ(q.combine(std::plus<>{}), 0L);
  heddle::per_worker<std::vector<int>> v(rt, [] { return std::vector<int>{1, 2}; });
  EXPECT_EQ(v.combine([](auto a, const auto&) { return a; }).size(), 2u);
}

TEST(PerWorker, OutsideThreadsHaveTheirOwnSlots) {
  heddle::runtime rt(2);
  heddle::per_worker<int> p(rt, 10);
  bool exists = true;
  int& mine = p.local(exists);
  EXPECT_FALSE(exists);
  EXPECT_EQ(mine, 10);
  mine = 11;
  EXPECT_EQ(&p.local(exists), &mine);
  EXPECT_TRUE(exists);
  int* theirs = nullptr;
  std::thread([&] {
    theirs = &p.local();
    *theirs += 5;
    EXPECT_EQ(&p.local(), theirs);
  }).join();
  EXPECT_NE(theirs, &mine);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(p.combine(std::plus<>{}), 26);
  // Slots never move: adding more outsiders leaves the first ones where they were.
  std::vector<std::thread> more;
  for (int i = 0; i < 8; ++i) more.emplace_back([&] { p.local() = 1; });
  for (auto& t : more) t.join();
  EXPECT_EQ(&p.local(), &mine);
  EXPECT_EQ(p.size(), 10u);
  EXPECT_EQ(p.combine(std::plus<>{}), 11 + 15 + 8);
}

// Each slot combined once; the factory called once per slot used, on the thread that uses it.
TEST(PerWorker, FactoryOncePerSlotAndEverySlotCombinedOnce) {
  watchdog dog("PerWorker.FactoryOncePerSlotAndEverySlotCombinedOnce", 60s);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime rt(n);
    std::atomic<int> made{0};
    heddle::per_worker<std::set<int>> p(rt, [&] {
      made++;
      return std::set<int>{};
    });
    const int count = heddle_test::scaled(20000, 2000);
    rt.execute([&] { heddle::parallel_for(0, count, [&](int i) { p.local().insert(i); }); });
    p.local().insert(count);  // this thread, an outsider
    EXPECT_EQ(made.load(), static_cast<int>(p.size()));
    EXPECT_LE(p.size(), n + 1u);
    std::set<int> all;
    std::size_t total = 0;
    p.combine_each([&](const std::set<int>& s) {
      total += s.size();
      all.insert(s.begin(), s.end());
    });
    EXPECT_EQ(total, static_cast<std::size_t>(count) + 1);  // no element in two slots
    EXPECT_EQ(all.size(), static_cast<std::size_t>(count) + 1);
    const std::set<int> merged = p.combine([](std::set<int> a, const std::set<int>& b) {
      a.insert(b.begin(), b.end());
      return a;
    });
    EXPECT_EQ(merged, all);
    std::size_t iterated = 0;
    for (const auto& s : std::as_const(p)) iterated += s.size();
    EXPECT_EQ(iterated, total);
    EXPECT_EQ(made.load(), static_cast<int>(p.size()));  // combining made nothing
  }
}

TEST(PerWorker, WorkersUseTheirIndexSlot) {
  heddle::runtime rt(4);
  heddle::per_worker<int> p(rt, -1);
  rt.execute([&] { heddle::parallel_for(0, 10000, [&](int) { p.local() = heddle::this_worker::index(); }); });
  for (int v : p) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 4);
  }
  std::set<int> distinct(p.begin(), p.end());
  EXPECT_EQ(distinct.size(), p.size());  // one slot per worker index
}

// The runtime current at construction: inside execute, rt; a worker of another runtime gets an
// outsider slot (and so does its thread inside rt.execute).
TEST(PerWorker, CurrentRuntimeAndWorkersOfAnotherRuntime) {
  heddle::runtime a(2), b(2);
  auto* p = a.execute([] { return new heddle::per_worker<int>(0); });
  std::unique_ptr<heddle::per_worker<int>> owned(p);
  a.task([&] { p->local() += 1; }).get();
  EXPECT_EQ(p->size(), 1u);
  b.task([&] { p->local() += 100; }).get();  // an outsider slot for b's worker
  EXPECT_EQ(p->size(), 2u);
  EXPECT_EQ(p->combine(std::plus<>{}), 101);
  heddle::per_worker<int> of_b(b, 0);
  b.task([&] { of_b.local()++; }).get();
  a.task([&] { b.execute([&] { of_b.local() += 10; }); }).get();  // outsider of b inside execute
  EXPECT_EQ(of_b.size(), 2u);
  EXPECT_EQ(of_b.combine(std::plus<>{}), 11);
}

TEST(PerWorker, ClearForgetsEverySlot) {
  heddle::runtime rt(2);
  std::atomic<int> made{0};
  heddle::per_worker<int> p(rt, [&] {
    made++;
    return 1;
  });
  p.local() = 7;
  rt.task([&] { p.local() = 8; }).get();
  EXPECT_EQ(p.size(), 2u);
  p.clear();
  EXPECT_EQ(p.size(), 0u);
  EXPECT_EQ(p.local(), 1);  // made anew (the thread's cached slot is forgotten)
  EXPECT_EQ(made.load(), 3);
  EXPECT_EQ(p.size(), 1u);
}

TEST(PerWorker, AFactoryThatThrowsLeavesTheSlotUnmade) {
  heddle::runtime rt(1);
  int calls = 0;
  heddle::per_worker<int> p(rt, [&]() -> int {
    if (++calls == 1) throw std::runtime_error("first");
    return 3;
  });
  EXPECT_THROW(p.local(), std::runtime_error);
  EXPECT_EQ(p.size(), 0u);
  EXPECT_EQ(p.local(), 3);
  EXPECT_EQ(p.size(), 1u);
}

TEST(PerWorker, MoveOnlyValues) {
  heddle::runtime rt(2);
  heddle::per_worker<std::unique_ptr<int>> p(rt, [] { return std::make_unique<int>(0); });
  rt.execute([&] { heddle::parallel_for(0, 1000, [&](int) { ++*p.local(); }); });
  long total = 0;
  p.combine_each([&](std::unique_ptr<int>& v) { total += *v; });
  EXPECT_EQ(total, 1000);
}

// Workers and outside threads accumulate at once; the totals are exact.
TEST(PerWorker, Stress) {
  watchdog dog("PerWorker.Stress", 300s);
  const int rounds = heddle_test::scaled(20, 4);
  const long count = heddle_test::scaled(200000L, 20000L);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime rt(n);
    for (int round = 0; round < rounds; ++round) {
      heddle::per_worker<long> sum(rt);
      heddle::per_worker<long> calls(rt, 0L);
      std::vector<std::thread> outsiders;
      for (int t = 0; t < 3; ++t)
        outsiders.emplace_back([&] {
          for (long i = 0; i < 1000; ++i) {
            sum.local() += i;
            calls.local()++;
          }
        });
      rt.execute([&] {
        heddle::parallel_for(0L, count, [&](long i) {
          sum.local() += i;
          calls.local()++;
        });
      });
      for (auto& t : outsiders) t.join();
      ASSERT_EQ(sum.combine(std::plus<>{}), count * (count - 1) / 2 + 3 * 999L * 1000 / 2);
      ASSERT_EQ(calls.combine(std::plus<>{}), count + 3000);
      ASSERT_LE(sum.size(), n + 4u);
    }
  }
}

}  // namespace
