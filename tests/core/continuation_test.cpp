// SPDX-License-Identifier: Apache-2.0
// future::then and when_all: values, type changes, void, chains, already-ready sources, exception
// propagation, input order, and the invalid_future checks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace continuation_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::serial_fib;
using heddle_test::task_fib;

TEST(Then, ValueToValue) {
  auto x = heddle::task([] { return 41; });
  heddle::future<int> c = std::move(x).then([](int v) { return v + 1; });
  EXPECT_FALSE(x.valid());  // NOLINT(bugprone-use-after-move): then consumes its source
  EXPECT_EQ(*c, 42);
}

TEST(Then, ChangesTheType) {
  auto s = heddle::task([] { return 12; }).then([](int v) { return std::to_string(v) + "!"; });
  static_assert(std::is_same_v<decltype(s), heddle::future<std::string>>);
  EXPECT_EQ(*s, "12!");
}

TEST(Then, VoidSourcesAndVoidContinuations) {
  std::atomic<int> order{0};
  int first_seen = -1, second_seen = -1;
  auto a = heddle::task([&] { first_seen = order.fetch_add(1); });
  heddle::future<int> b = std::move(a).then([&] {
    second_seen = order.fetch_add(1);
    return 5;
  });
  EXPECT_EQ(*b, 5);
  EXPECT_EQ(first_seen, 0);
  EXPECT_EQ(second_seen, 1);

  int seen = 0;
  heddle::future<void> c = heddle::task([] { return 9; }).then([&seen](int v) { seen = v; });
  c.get();
  EXPECT_EQ(seen, 9);
}

TEST(Then, OnAnAlreadyReadySource) {
  auto x = heddle::task([] { return 3; });
  x.wait();
  ASSERT_TRUE(x.is_ready());
  auto y = std::move(x).then([](int v) { return v * 10; });
  EXPECT_EQ(*y, 30);
  // A failed, ready source passes its exception on.
  auto e = heddle::task([]() -> int { throw std::runtime_error("ready and failed"); });
  e.wait();
  std::atomic<bool> called{false};
  auto f = std::move(e).then([&](int v) {
    called = true;
    return v;
  });
  EXPECT_THROW(*f, std::runtime_error);
  EXPECT_FALSE(called.load());
}

TEST(Then, RunsAsATaskOnAWorker) {
  const auto main_id = std::this_thread::get_id();
  auto ready = heddle::task([] { return 1; });
  ready.wait();
  auto on_ready = std::move(ready).then([](int) { return std::this_thread::get_id(); });
  auto pending = heddle::task([] {
                   std::this_thread::sleep_for(5ms);
                   return 1;
                 }).then([](int) { return std::this_thread::get_id(); });
  EXPECT_NE(*on_ready, main_id);
  EXPECT_NE(*pending, main_id);
}

TEST(Then, MoveOnlyValueAndMoveOnlyCallable) {
  auto p = heddle::task([] { return std::make_unique<int>(6); });
  auto q = std::move(p).then([k = std::make_unique<int>(7)](std::unique_ptr<int> v) { return *v * *k; });
  EXPECT_EQ(*q, 42);
}

TEST(Then, ExceptionInTheContinuation) {
  auto c = heddle::task([] { return 1; }).then([](int) -> int { throw std::domain_error("in then"); });
  try {
    (void)*c;
    FAIL() << "no exception";
  } catch (const std::domain_error& e) {
    EXPECT_STREQ(e.what(), "in then");
  }
}

TEST(Then, ExceptionSkipsTheWholeChain) {
  std::atomic<int> calls{0};
  auto c = heddle::task([]() -> int { throw std::runtime_error("source"); })
               .then([&](int v) {
                 calls++;
                 return v + 1;
               })
               .then([&](int v) {
                 calls++;
                 return std::to_string(v);
               })
               .then([&](std::string) { calls++; });
  try {
    c.get();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "source");
  }
  EXPECT_EQ(calls.load(), 0);
}

TEST(Then, LongChain) {
  heddle::future<long> f = heddle::task([] { return 0L; });
  constexpr long n = 2000;
  for (long i = 1; i <= n; ++i) f = std::move(f).then([i](long v) { return v + i; });
  EXPECT_EQ(*f, n * (n + 1) / 2);
}

TEST(Then, ManyChainsInsideTasks) {
  auto total = heddle::task([] {
    std::vector<heddle::future<long>> chains;
    for (int c = 0; c < 200; ++c) {
      auto f = heddle::task(task_fib, c % 12);
      chains.push_back(std::move(f).then([](long v) { return v * 2; }).then([c](long v) { return v + c; }));
    }
    long s = 0;
    for (auto& f : chains) s += *f;
    return s;
  });
  long expect = 0;
  for (int c = 0; c < 200; ++c) expect += serial_fib(c % 12) * 2 + c;
  EXPECT_EQ(*total, expect);
}

TEST(Then, DroppedContinuationStillRuns) {
  std::atomic<int> ran{0};
  {
    auto f = heddle::task([] { return 1; }).then([&ran](int v) { ran += v; });
    (void)f;  // dropped unread
  }
  heddle_test::watchdog dog("Then.DroppedContinuationStillRuns", std::chrono::seconds(60));
  while (ran.load() == 0) std::this_thread::yield();
  EXPECT_EQ(ran.load(), 1);
}

struct throws_on_copy {
  throws_on_copy() = default;
  throws_on_copy(const throws_on_copy&) { throw std::length_error("copy"); }
  throws_on_copy& operator=(const throws_on_copy&) = default;
  int operator()(int v) const { return v; }
};

TEST(Then, ThrowingCallableCopyLeavesTheSourceUsable) {
  auto x = heddle::task([] { return 4; });
  throws_on_copy c;
  EXPECT_THROW((void)std::move(x).then(c), std::length_error);
  ASSERT_TRUE(x.valid());  // NOLINT(bugprone-use-after-move): then failed before taking it
  EXPECT_EQ(*x, 4);
}

TEST(WhenAll, VariadicGivesValues) {
  auto a = heddle::task([] { return 20; });
  auto b = heddle::task([] { return 1.5; });
  auto c = heddle::task([] { return std::string("s"); });
  heddle::future<std::tuple<int, double, std::string>> all = heddle::when_all(std::move(a), std::move(b), std::move(c));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): when_all takes the inputs
  EXPECT_FALSE(b.valid());  // NOLINT(bugprone-use-after-move)
  auto [x, y, z] = all.get();
  EXPECT_EQ(x, 20);
  EXPECT_EQ(y, 1.5);
  EXPECT_EQ(z, "s");
}

TEST(WhenAll, VoidInputsGiveMonostate) {
  std::atomic<int> ran{0};
  auto v = heddle::task([&] { ran++; });
  auto i = heddle::task([] { return 3; });
  auto all = heddle::when_all(std::move(v), std::move(i));
  static_assert(std::is_same_v<decltype(all), heddle::future<std::tuple<std::monostate, int>>>);
  EXPECT_EQ(std::get<1>(*all), 3);
  EXPECT_EQ(ran.load(), 1);
}

TEST(WhenAll, InputsThatFinishInAnyOrder) {
  auto slow = heddle::task([] {
    std::this_thread::sleep_for(20ms);
    return 1;
  });
  auto fast = heddle::task([] { return 2; });
  fast.wait();  // one input already ready when when_all starts
  auto all = heddle::when_all(std::move(slow), std::move(fast));
  auto [s, f] = *all;
  EXPECT_EQ(s, 1);
  EXPECT_EQ(f, 2);
}

TEST(WhenAll, ExceptionOfTheFirstFailedInputInArgumentOrder) {
  // `late` fails after `early` in time but comes first in the arguments: its exception wins.
  auto ok = heddle::task([] { return 1; });
  auto late = heddle::task([]() -> int {
    std::this_thread::sleep_for(20ms);
    throw std::runtime_error("late");
  });
  auto early = heddle::task([]() -> int { throw std::logic_error("early"); });
  early.wait();
  auto all = heddle::when_all(std::move(ok), std::move(late), std::move(early));
  try {
    (void)all.get();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "late");
  }
}

TEST(WhenAll, VectorKeepsOrder) {
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < 1000; ++i)
    fs.push_back(heddle::task([i] {
      if (i % 97 == 0) std::this_thread::sleep_for(1ms);
      return i * i;
    }));
  heddle::future<std::vector<int>> all = heddle::when_all(std::move(fs));
  std::vector<int> v = std::move(all).get();
  ASSERT_EQ(v.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(v[i], i * i);
}

TEST(WhenAll, EmptyVectorIsReadyAtOnce) {
  auto all = heddle::when_all(std::vector<heddle::future<int>>{});
  EXPECT_TRUE(all.is_ready());
  EXPECT_TRUE(all->empty());
}

TEST(WhenAll, VectorOfVoid) {
  std::atomic<int> ran{0};
  std::vector<heddle::future<void>> fs;
  for (int i = 0; i < 100; ++i) fs.push_back(heddle::task([&] { ran++; }));
  auto all = heddle::when_all(std::move(fs));
  EXPECT_EQ(all->size(), 100u);
  EXPECT_EQ(ran.load(), 100);
}

TEST(WhenAll, VectorException) {
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < 50; ++i)
    fs.push_back(heddle::task([i]() -> int {
      if (i == 30) throw std::runtime_error("thirty");
      if (i == 40) throw std::runtime_error("forty");
      return i;
    }));
  auto all = heddle::when_all(std::move(fs));
  try {
    (void)*all;
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "thirty");
  }
}

TEST(WhenAll, InvalidInputsThrowAndKeepTheValidOnes) {
  heddle::future<int> empty;
  auto good = heddle::task([] { return 1; });
  EXPECT_THROW((void)heddle::when_all(std::move(good), std::move(empty)), heddle::invalid_future);
  // The check comes before anything is taken: the valid input is still usable.
  ASSERT_TRUE(good.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(*good, 1);

  std::vector<heddle::future<int>> fs;
  fs.push_back(heddle::task([] { return 2; }));
  fs.emplace_back();
  EXPECT_THROW((void)heddle::when_all(std::move(fs)), heddle::invalid_future);
  ASSERT_TRUE(fs[0].valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(*fs[0], 2);
}

TEST(WhenAll, ComposesWithThen) {
  auto sum = heddle::when_all(heddle::task(task_fib, 10), heddle::task(task_fib, 11))
                 .then([](std::tuple<long, long> t) { return std::get<0>(t) + std::get<1>(t); });
  EXPECT_EQ(*sum, serial_fib(12));
  // then's exception inside when_all, and when_all's exception through then.
  auto bad = heddle::task([] { return 1; }).then([](int) -> int { throw std::runtime_error("t"); });
  auto all = heddle::when_all(std::move(bad), heddle::task([] { return 2; }));
  std::atomic<bool> called{false};
  auto after = std::move(all).then([&](std::tuple<int, int>) {
    called = true;
    return 0;
  });
  EXPECT_THROW(*after, std::runtime_error);
  EXPECT_FALSE(called.load());
}

TEST(WhenAll, InsideTasksAndNested) {
  auto r = heddle::task([] {
    std::vector<heddle::future<std::tuple<long, long>>> pairs;
    for (int i = 0; i < 100; ++i)
      pairs.push_back(heddle::when_all(heddle::task(task_fib, i % 10), heddle::task(task_fib, i % 10 + 1)));
    auto all = heddle::when_all(std::move(pairs));
    long s = 0;
    for (auto& [a, b] : *all) s += a + b;
    return s;
  });
  long expect = 0;
  for (int i = 0; i < 100; ++i) expect += serial_fib(i % 10 + 2);
  EXPECT_EQ(*r, expect);
}

TEST(WhenAll, DroppedUnread) {
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    auto all = heddle::when_all(heddle::task([&] {
                                  ran++;
                                  return std::string(64, 'a');
                                }),
                                heddle::task([&] {
                                  ran++;
                                  return std::vector<int>(10, 1);
                                }));
    (void)all;
  }
  heddle_test::watchdog dog("WhenAll.DroppedUnread", std::chrono::seconds(60));
  while (ran.load() < 200) std::this_thread::yield();
  EXPECT_EQ(ran.load(), 200);
}

}  // namespace

}  // namespace continuation_test
