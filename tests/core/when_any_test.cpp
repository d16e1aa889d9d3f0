// SPDX-License-Identifier: Apache-2.0
// when_any and when_all_ready: which input wins, the futures handed back (each with its own value or
// exception, usable afterwards: waited on, chained, dropped), empty and already-ready inputs, void
// and move-only values, inputs completed from other threads, the lifetime of the when_any record
// when its result is dropped before the losers complete, and stress loops on 1, 2 and 4 workers.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <heddle/heddle.hpp>

#include "manual_promise.hpp"
#include "test_support.hpp"

namespace {

using heddle_test::manual_promise;
using heddle_test::scaled;

template <class T>
std::vector<heddle::future<T>> futures_of(std::vector<manual_promise<T>>& ps) {
  std::vector<heddle::future<T>> fs;
  for (auto& p : ps) fs.push_back(p.get_future());
  return fs;
}

TEST(WhenAny, TheFirstCompletionWinsAndEveryFutureComesBack) {
  std::vector<manual_promise<int>> ps(4);
  auto any = heddle::when_any(futures_of(ps));
  static_assert(
      std::is_same_v<decltype(any), heddle::future<heddle::when_any_result<std::vector<heddle::future<int>>>>>);
  EXPECT_FALSE(any.is_ready());
  ps[2].set_value(20);
  ASSERT_TRUE(any.is_ready());  // finished inline by the winner's completion
  auto r = std::move(any).get();
  EXPECT_EQ(r.index, 2u);
  ASSERT_EQ(r.futures.size(), 4u);
  EXPECT_EQ(*r.futures[2], 20);
  for (std::size_t i : {0u, 1u, 3u}) EXPECT_FALSE(r.futures[i].is_ready());
  // The losers are ordinary futures again: completed later, forced from here, chained.
  std::thread t([&] { ps[0].set_value(0); });
  EXPECT_EQ(*r.futures[0], 0);
  t.join();
  auto chained = std::move(r.futures[1]).then([](int v) { return v * 2; });
  ps[1].set_value(5);
  EXPECT_EQ(*chained, 10);
  ps[3].set_value(7);
  EXPECT_EQ(*r.futures[3], 7);
}

TEST(WhenAny, AnInputAlreadyReadyWinsAtOnce) {
  std::vector<manual_promise<int>> ps(3);
  std::vector<heddle::future<int>> fs;
  fs.push_back(ps[0].get_future());
  fs.push_back(heddle::make_ready_future(11));
  fs.push_back(heddle::make_ready_future(12));
  fs.push_back(ps[1].get_future());
  auto any = heddle::when_any(std::move(fs));
  ASSERT_TRUE(any.is_ready());
  EXPECT_EQ(any->index, 1u);  // the lowest index among those ready at the call
  EXPECT_EQ(*any->futures[1], 11);
  EXPECT_EQ(*any->futures[2], 12);
  EXPECT_FALSE(any->futures[0].is_ready());
  ps[0].set_value(1);
  ps[1].set_value(2);
  EXPECT_EQ(*any->futures[0], 1);
  EXPECT_EQ(*any->futures[3], 2);
}

TEST(WhenAny, EmptyInputIsReadyWithNoIndex) {
  auto any = heddle::when_any(std::vector<heddle::future<int>>{});
  ASSERT_TRUE(any.is_ready());
  EXPECT_EQ(any->index, static_cast<std::size_t>(-1));
  EXPECT_TRUE(any->futures.empty());
  std::vector<heddle::future<void>> none;
  auto any_void = heddle::when_any(none.begin(), none.end());
  EXPECT_EQ(any_void->index, static_cast<std::size_t>(-1));
}

TEST(WhenAny, AFailedInputWinsWithoutFailingTheResult) {
  std::vector<manual_promise<std::string>> ps(2);
  auto any = heddle::when_any(futures_of(ps));
  ps[1].set_exception(std::make_exception_ptr(std::runtime_error("first and failed")));
  auto r = std::move(any).get();  // when_any itself never throws
  EXPECT_EQ(r.index, 1u);
  EXPECT_THROW(r.futures[1].get(), std::runtime_error);
  ps[0].set_value("late");
  EXPECT_EQ(*r.futures[0], "late");
}

TEST(WhenAny, VoidAndMoveOnlyValues) {
  std::vector<manual_promise<void>> vs(2);
  auto any_void = heddle::when_any(futures_of(vs));
  vs[0].set_value();
  EXPECT_EQ(any_void->index, 0u);
  any_void->futures[0].get();
  vs[1].set_value();
  any_void->futures[1].get();

  std::vector<manual_promise<std::unique_ptr<int>>> ps(3);
  auto any = heddle::when_any(futures_of(ps));
  ps[1].set_value(std::make_unique<int>(42));
  auto r = std::move(any).get();
  std::unique_ptr<int> p = std::move(r.futures[r.index]).get();
  EXPECT_EQ(*p, 42);
  ps[0].set_value(std::make_unique<int>(1));
  ps[2].set_value(nullptr);
  EXPECT_EQ(*std::move(r.futures[0]).get(), 1);
  EXPECT_EQ(r.futures[2].get(), nullptr);
}

TEST(WhenAny, TasksOnARuntimeAndAnIteratorRange) {
  heddle::runtime rt(2);
  std::atomic<bool> release{false};
  std::list<heddle::future<int>> fs;
  fs.push_back(rt.task([&] {
    while (!release.load()) std::this_thread::yield();
    return 1;
  }));
  fs.push_back(rt.task([] { return 2; }));
  auto any = heddle::when_any(fs.begin(), fs.end());
  auto r = std::move(any).get();
  EXPECT_EQ(r.index, 1u);
  EXPECT_EQ(*r.futures[1], 2);
  release = true;
  EXPECT_EQ(*r.futures[0], 1);
  // Its successor runs on the inputs' runtime.
  std::vector<heddle::future<int>> more;
  more.push_back(rt.task([] { return 3; }));
  auto on_rt = heddle::when_any(std::move(more)).then([](auto res) { return *res.futures[res.index] + 1; });
  EXPECT_EQ(*on_rt, 4);
}

TEST(WhenAny, RefusesAnInputWithoutState) {
  std::vector<heddle::future<int>> fs;
  fs.push_back(heddle::make_ready_future(1));
  fs.emplace_back();
  EXPECT_THROW((void)heddle::when_any(std::move(fs)), heddle::invalid_future);
  EXPECT_TRUE(fs[0].valid());  // left as it was
}

// The when_any future dropped before anything completes, or its result dropped while the losers
// are pending: the record and the inputs are freed when the last input completes (ASan checks).
TEST(WhenAny, ResultDroppedBeforeTheLosersComplete) {
  {
    std::vector<manual_promise<int>> ps(3);
    (void)heddle::when_any(futures_of(ps));
    ps[1].set_value(1);
    ps[0].set_value(0);
    ps[2].set_value(2);
  }
  {
    std::vector<manual_promise<int>> ps(3);
    {
      auto any = heddle::when_any(futures_of(ps));
      ps[0].set_value(0);
      EXPECT_EQ(any->index, 0u);
    }  // the result and its pending futures go
    ps[1].set_value(1);
    ps[2].set_value(2);
  }
  {
    std::vector<manual_promise<std::string>> ps(3);
    {
      auto any = heddle::when_any(futures_of(ps));
      (void)any;
    }
    std::vector<std::thread> ts;
    for (int i = 0; i < 3; ++i) ts.emplace_back([&ps, i] { ps[i].set_value(std::string(100, 'a' + i)); });
    for (auto& t : ts) t.join();
  }
}

// Inputs completed at once from several threads: exactly one wins, every value arrives, and the
// result is dropped at a random point relative to the completions.
TEST(WhenAny, StressConcurrentCompletions) {
  const int rounds = scaled(1000, 150);
  heddle_test::progress_watchdog dog("when_any concurrent completions", std::chrono::seconds(30));
  for (int round = 0; round < rounds; ++round) {
    dog.tick();
    const int n = 1 + round % 4;
    std::vector<manual_promise<int>> ps(n);
    auto any = heddle::when_any(futures_of(ps));
    std::atomic<int> go{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < n; ++i)
      ts.emplace_back([&, i] {
        go.fetch_add(1);
        while (go.load() < n) std::this_thread::yield();
        ps[i].set_value(i * 10 + round);
      });
    if (round % 3 == 0) {
      any = {};  // dropped while the completions race
      for (auto& t : ts) t.join();
      continue;
    }
    auto r = std::move(any).get();
    ASSERT_LT(r.index, static_cast<std::size_t>(n));
    ASSERT_TRUE(r.futures[r.index].is_ready());
    EXPECT_EQ(*r.futures[r.index], static_cast<int>(r.index) * 10 + round);
    if (round % 3 == 1) r.futures.clear();  // dropped while the losers may still complete
    for (auto& t : ts) t.join();
    for (std::size_t i = 0; i < r.futures.size(); ++i) EXPECT_EQ(*r.futures[i], static_cast<int>(i) * 10 + round);
  }
}

// when_any over tasks on 1, 2 and 4 workers, waited on from a worker and from outside, nested in
// a chain: the winner's value is right and every loser's value is still there.
TEST(WhenAny, StressOverTasks) {
  for (unsigned threads : {1u, 2u, 4u}) {
    heddle::runtime rt(threads);
    const int rounds = scaled(2000, 200);
    heddle_test::progress_watchdog dog("when_any over tasks", std::chrono::seconds(30));
    long total = 0, expected = 0;
    for (int round = 0; round < rounds; ++round) {
      dog.tick();
      const int n = 1 + round % 5;
      auto body = [&rt, n, round] {
        std::vector<heddle::future<long>> fs;
        for (int i = 0; i < n; ++i)
          fs.push_back(rt.task([i, round] {
            heddle_test::spin_work(static_cast<unsigned>(heddle_test::mix(round * 8 + i) % 2000));
            return static_cast<long>(i + round);
          }));
        auto r = heddle::when_any(std::move(fs)).get();
        long sum = *r.futures[r.index] - static_cast<long>(r.index);  // == round
        for (auto& f : r.futures) sum += *f;
        return sum;
      };
      total += round % 2 ? rt.task(body).get() : body();
      expected += round + static_cast<long>(n) * round + static_cast<long>(n) * (n - 1) / 2;
    }
    EXPECT_EQ(total, expected) << threads << " workers";
  }
}

TEST(WhenAllReady, HandsBackEachFutureWithItsOwnResult) {
  heddle::runtime rt(2);
  std::vector<heddle::future<int>> fs;
  fs.push_back(rt.task([] { return 1; }));
  fs.push_back(rt.task([]() -> int { throw std::runtime_error("second"); }));
  fs.push_back(heddle::make_ready_future(3));
  auto all = heddle::when_all_ready(std::move(fs));
  static_assert(std::is_same_v<decltype(all), heddle::future<std::vector<heddle::future<int>>>>);
  auto r = std::move(all).get();  // never fails itself
  ASSERT_EQ(r.size(), 3u);
  for (auto& f : r) EXPECT_TRUE(f.is_ready());
  EXPECT_EQ(*r[0], 1);
  EXPECT_THROW(r[1].get(), std::runtime_error);
  EXPECT_EQ(*r[2], 3);
}

TEST(WhenAllReady, EmptyAlreadyReadyVoidMoveOnlyAndRanges) {
  auto none = heddle::when_all_ready(std::vector<heddle::future<int>>{});
  ASSERT_TRUE(none.is_ready());
  EXPECT_TRUE(none->empty());

  std::vector<heddle::future<void>> vs;
  vs.push_back(heddle::make_ready_future());
  vs.push_back(heddle::make_exceptional_future<void>(std::logic_error("v")));
  auto v = heddle::when_all_ready(std::move(vs));
  ASSERT_TRUE(v.is_ready());  // every input was ready: finished inside the call
  (*v)[0].get();
  EXPECT_THROW((*v)[1].get(), std::logic_error);

  std::vector<manual_promise<std::unique_ptr<int>>> ps(3);
  std::list<heddle::future<std::unique_ptr<int>>> l;
  for (auto& p : ps) l.push_back(p.get_future());
  auto all = heddle::when_all_ready(l.begin(), l.end());
  ps[2].set_value(std::make_unique<int>(2));
  ps[0].set_value(std::make_unique<int>(0));
  EXPECT_FALSE(all.is_ready());
  std::thread t([&] { ps[1].set_value(std::make_unique<int>(1)); });
  auto r = std::move(all).get();
  t.join();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(*std::move(r[i]).get(), i);
}

TEST(WhenAll, IteratorRangeGivesValues) {
  std::list<heddle::future<int>> l;
  for (int i = 0; i < 5; ++i) l.push_back(heddle::task([i] { return i * i; }));
  heddle::future<std::vector<int>> all = heddle::when_all(l.begin(), l.end());
  EXPECT_EQ(*all, (std::vector<int>{0, 1, 4, 9, 16}));
}

TEST(WhenAllReady, StressConcurrentCompletionsAndWorkers) {
  for (unsigned threads : {1u, 2u, 4u}) {
    heddle::runtime rt(threads);
    const int rounds = scaled(1500, 150);
    heddle_test::progress_watchdog dog("when_all_ready stress", std::chrono::seconds(30));
    for (int round = 0; round < rounds; ++round) {
      dog.tick();
      const int n = round % 6;
      std::vector<manual_promise<int>> ps(n);
      std::vector<heddle::future<int>> fs = futures_of(ps);
      fs.push_back(rt.task([round] { return -round; }));
      auto all = heddle::when_all_ready(std::move(fs)).then([round](std::vector<heddle::future<int>> r) {
        long sum = 0;
        for (auto& f : r) {
          try {
            sum += *f;
          } catch (const std::runtime_error&) {
            sum += 1000;
          }
        }
        return sum + round;
      });
      std::vector<std::thread> ts;
      for (int i = 0; i < n; ++i)
        ts.emplace_back([&ps, i] {
          if (i % 2) ps[i].set_exception(std::make_exception_ptr(std::runtime_error("odd")));
          else ps[i].set_value(i);
        });
      long expected = 0;
      for (int i = 0; i < n; ++i) expected += i % 2 ? 1000 : i;
      EXPECT_EQ(*all, expected);
      for (auto& t : ts) t.join();
    }
  }
}

}  // namespace
