// SPDX-License-Identifier: Apache-2.0
// shared_future: one result read through many copies (the same object, the same exception for
// every copy), several successors on several copies, unwrapping successors, void and move-only
// values, waits from workers and from other threads, and the record's lifetime when every copy is
// dropped before the source completes; stress loops with many waiters and successors at once.
#include <gtest/gtest.h>

#include <atomic>
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

TEST(SharedFuture, EveryCopyReadsTheSameValue) {
  heddle::shared_future<std::string> a = heddle::task([] { return std::string("shared"); }).share();
  heddle::shared_future<std::string> b = a;
  heddle::shared_future<std::string> c;
  EXPECT_FALSE(c.valid());
  c = b;
  static_assert(std::is_same_v<decltype(a.get()), const std::string&>);
  EXPECT_EQ(a.get(), "shared");
  EXPECT_EQ(&a.get(), &b.get());
  EXPECT_EQ(&b.get(), &*c);
  EXPECT_TRUE(c.is_ready());
  const std::string* where = &a.get();
  a = {};
  b = std::move(c);
  EXPECT_FALSE(c.valid());     // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(&b.get(), where);  // alive while a copy is
}

TEST(SharedFuture, FromAFutureAndItsExceptionForEveryCopy) {
  heddle::future<int> f = heddle::task([]() -> int { throw std::runtime_error("once"); });
  heddle::shared_future<int> s = std::move(f);  // as std::shared_future: from a future
  EXPECT_FALSE(f.valid());                      // NOLINT(bugprone-use-after-move)
  std::vector<heddle::shared_future<int>> copies(5, s);
  for (auto& c : copies) {
    EXPECT_THROW(c.get(), std::runtime_error);
    EXPECT_THROW(c.get(), std::runtime_error);  // every time
    c.wait();                                   // wait() does not throw the stored exception
  }
  heddle::shared_future<void> v = heddle::make_exceptional_future<void>(std::logic_error("void"));
  auto v2 = v;
  EXPECT_THROW(v.get(), std::logic_error);
  EXPECT_THROW(v2.get(), std::logic_error);
}

TEST(SharedFuture, WithoutStateThrowsInvalidFuture) {
  heddle::shared_future<int> none;
  EXPECT_THROW(none.wait(), heddle::invalid_future);
  EXPECT_THROW((void)none.get(), heddle::invalid_future);
  EXPECT_THROW((void)none.then([](int v) { return v; }), heddle::invalid_future);
  heddle::future<int> empty;
  EXPECT_THROW((void)std::move(empty).share(), heddle::invalid_future);
}

TEST(SharedFuture, SeveralSuccessorsOnSeveralCopies) {
  manual_promise<int> p;
  heddle::shared_future<int> s = p.get_future().share();
  auto copy = s;
  auto a = s.then([](const int& v) { return v + 1; });
  auto b = copy.then([](int v) { return std::to_string(v); });
  auto c = s.then(heddle::strategy::express, [](int v) { return v * 2; });
  std::atomic<int> voids{0};
  auto d = copy.then([&voids](int) { voids.fetch_add(1); });
  EXPECT_TRUE(s.valid());  // then does not consume
  EXPECT_FALSE(a.is_ready());
  std::thread t([&] { p.set_value(20); });
  EXPECT_EQ(*a, 21);
  EXPECT_EQ(*b, "20");
  EXPECT_EQ(*c, 40);
  d.get();
  EXPECT_EQ(voids.load(), 1);
  t.join();
  // A successor added once the result is there starts at once.
  EXPECT_EQ(*s.then([](int v) { return v - 20; }), 0);
}

TEST(SharedFuture, AFailedSourceSkipsEverySuccessor) {
  manual_promise<int> p;
  heddle::shared_future<int> s = p.get_future();
  std::atomic<int> called{0};
  std::vector<heddle::future<int>> next;
  for (int i = 0; i < 4; ++i)
    next.push_back(s.then([&called](int v) {
      called.fetch_add(1);
      return v;
    }));
  p.set_exception(std::make_exception_ptr(std::out_of_range("source")));
  for (auto& f : next) EXPECT_THROW(f.get(), std::out_of_range);
  EXPECT_EQ(called.load(), 0);
  // An exception of the continuation goes to its own future only.
  heddle::shared_future<int> ok = heddle::make_ready_future(1);
  auto bad = ok.then([](int) -> int { throw std::logic_error("successor"); });
  auto good = ok.then([](int v) { return v; });
  EXPECT_THROW(bad.get(), std::logic_error);
  EXPECT_EQ(*good, 1);
}

TEST(SharedFuture, VoidAndMoveOnlyValues) {
  std::atomic<int> ran{0};
  heddle::shared_future<void> v = heddle::task([&ran] { ran.fetch_add(1); }).share();
  auto v2 = v;
  auto after = v2.then([&ran] { return ran.load() * 10; });
  v.get();
  v2.get();
  EXPECT_EQ(*after, 10);
  EXPECT_EQ(ran.load(), 1);

  heddle::shared_future<std::unique_ptr<int>> u = heddle::task([] { return std::make_unique<int>(7); }).share();
  auto u2 = u;
  EXPECT_EQ(*u.get(), 7);
  EXPECT_EQ(u.get().get(), u2.get().get());  // one object, not a copy per handle
  auto doubled = u2.then([](const std::unique_ptr<int>& p) { return *p * 2; });
  EXPECT_EQ(*doubled, 14);
}

TEST(SharedFuture, SuccessorsThatReturnFuturesAreUnwrapped) {
  heddle::runtime rt(2);
  heddle::shared_future<int> s = rt.task([] { return 5; }).share();
  auto inner = s.then([&rt](int v) { return rt.task([v] { return v * 3; }); });
  static_assert(std::is_same_v<decltype(inner), heddle::future<int>>);
  EXPECT_EQ(*inner, 15);
  manual_promise<std::string> late;
  auto from_promise = s.then([f = late.get_future()](int) mutable { return std::move(f); });
  std::thread t([&] { late.set_value("late"); });
  EXPECT_EQ(*from_promise, "late");
  t.join();
}

// Every copy dropped before the source completes, with successors pending: the record lives until
// the source completes and the successors ran (ASan checks the frees, the values check the runs).
TEST(SharedFuture, CopiesDroppedBeforeTheSourceCompletes) {
  manual_promise<std::string> p;
  heddle::future<std::size_t> len;
  {
    heddle::shared_future<std::string> s = p.get_future();
    auto copy = s;
    len = copy.then([](const std::string& v) { return v.size(); });
  }
  {
    manual_promise<int> q;
    (void)q.get_future().share();  // no copy, no successor: freed with the source
    q.set_value(1);
  }
  std::thread t([&] { p.set_value(std::string(1000, 'x')); });
  EXPECT_EQ(*len, 1000u);
  t.join();
}

// Workers wait on one shared future at once (each helps or sleeps on its own node) while the source
// is still running, on 1, 2 and 4 workers; and the copies made in tasks are read in tasks.
TEST(SharedFuture, WorkersWaitOnOneResult) {
  for (unsigned threads : {1u, 2u, 4u}) {
    heddle::runtime rt(threads);
    const int rounds = scaled(300, 40);
    for (int round = 0; round < rounds; ++round) {
      heddle::shared_future<long> s = rt.task([round] {
                                          heddle_test::spin_work(3000);
                                          return static_cast<long>(round);
                                        }).share();
      std::vector<heddle::future<long>> readers;
      for (int i = 0; i < 8; ++i) readers.push_back(rt.task([s, i] { return s.get() + i; }));
      long sum = 0;
      for (auto& r : readers) sum += *r;
      EXPECT_EQ(sum, 8L * round + 28) << threads << " workers, round " << round;
    }
  }
}

// Many threads wait, read and add successors at once while another completes the source: every
// waiter sees the value, every successor runs once, nothing leaks or races (TSan, ASan).
TEST(SharedFuture, StressWaitersAndSuccessorsFromManyThreads) {
  heddle::runtime rt(2);
  const int rounds = scaled(1000, 100);
  heddle_test::progress_watchdog dog("shared_future stress", std::chrono::seconds(30));
  for (int round = 0; round < rounds; ++round) {
    dog.tick();
    manual_promise<std::string> p;
    heddle::shared_future<std::string> s = p.get_future().share();
    const std::string expected = "value " + std::to_string(round);
    std::atomic<int> runs{0};
    std::atomic<int> seen{0};
    std::vector<heddle::future<int>> successors(4);
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
      ts.emplace_back([&, i, copy = s]() mutable {
        if (i % 2 == 0) {
          successors[i] = copy.then([&runs, &expected](const std::string& v) {
            runs.fetch_add(1);
            return v == expected ? 1 : 0;
          });
        }
        if (copy.get() == expected) seen.fetch_add(1);
        if (i == 3) copy = {};  // a copy dropped while others still read
      });
    ts.emplace_back([&p, &expected] { p.set_value(expected); });
    for (int i = 0; i < 2; ++i) {  // successors on a worker, added while the source completes
      successors[2 * i + 1] = rt.task([s] {
                                  return s.then([](const std::string& v) { return static_cast<int>(v.size()); });
                                }).then([](heddle::future<int> f) { return f; });
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(seen.load(), 4);
    int ok = 0;
    for (int i = 0; i < 4; ++i)
      ok += i % 2 == 0 ? *successors[i] : (*successors[i] == static_cast<int>(expected.size()));
    EXPECT_EQ(ok, 4);
    EXPECT_EQ(runs.load(), 2);
  }
}

}  // namespace
