// SPDX-License-Identifier: Apache-2.0
// then's unwrapping (a continuation that returns a future gives that future's result, with nothing
// waiting for it) and make_ready_future / make_exceptional_future: values, void, move-only values,
// exceptions from the source, the continuation and the inner future, inner futures completed later
// on other threads, where successors of ready futures run, and long asynchronous chains.
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

TEST(Unwrap, AContinuationReturningAFutureGivesItsValue) {
  auto f = heddle::task([] { return 20; }).then([](int v) { return heddle::task([v] { return v + 1; }); });
  static_assert(std::is_same_v<decltype(f), heddle::future<int>>);
  EXPECT_EQ(*f, 21);
  auto s = heddle::make_ready_future(std::string("a")).then(heddle::strategy::express, [](std::string v) {
    return heddle::make_ready_future(v + "b");
  });
  static_assert(std::is_same_v<decltype(s), heddle::future<std::string>>);
  EXPECT_EQ(*s, "ab");
}

TEST(Unwrap, VoidOnEitherSide) {
  std::atomic<int> order{0};
  int inner_at = -1;
  heddle::future<void> v = heddle::task([] {}).then([&] {
    return heddle::task([&] { inner_at = order.fetch_add(1); });
  });
  v.get();
  EXPECT_EQ(inner_at, 0);
  heddle::future<int> i = heddle::make_ready_future().then([] { return heddle::make_ready_future(3); });
  EXPECT_EQ(*i, 3);
  heddle::future<void> w = heddle::make_ready_future(1).then([](int) { return heddle::make_ready_future(); });
  w.get();
}

TEST(Unwrap, MoveOnlyValuesThroughTheInnerFuture) {
  auto f = heddle::task([] { return 4; }).then([](int v) {
    return heddle::task([v] { return std::make_unique<int>(v); });
  });
  std::unique_ptr<int> p = std::move(f).get();
  EXPECT_EQ(*p, 4);
}

TEST(Unwrap, TheInnerFutureCompletesLaterOnAnotherThread) {
  manual_promise<int> inner;
  std::atomic<bool> continuation_ran{false};
  auto f = heddle::task([] { return 1; }).then([&, g = inner.get_future()](int v) mutable {
    continuation_ran = true;
    return std::move(g).then([v](int w) { return v + w; });
  });
  // The continuation has returned; the outer future waits on the inner one without a thread.
  while (!continuation_ran.load()) std::this_thread::yield();
  EXPECT_FALSE(f.is_ready());
  std::thread t([&] { inner.set_value(41); });
  EXPECT_EQ(*f, 42);
  t.join();
}

TEST(Unwrap, ExceptionsFromTheSourceTheContinuationAndTheInnerFuture) {
  std::atomic<int> calls{0};
  auto from_source = heddle::task([]() -> int { throw std::runtime_error("source"); }).then([&](int v) {
    calls.fetch_add(1);
    return heddle::make_ready_future(v);
  });
  EXPECT_THROW(from_source.get(), std::runtime_error);
  EXPECT_EQ(calls.load(), 0);

  auto from_continuation = heddle::task([] { return 1; }).then([](int) -> heddle::future<int> {
    throw std::logic_error("continuation");
  });
  EXPECT_THROW(from_continuation.get(), std::logic_error);

  auto from_inner = heddle::task([] { return 1; }).then([](int) {
    return heddle::task([]() -> int { throw std::out_of_range("inner"); });
  });
  EXPECT_THROW(from_inner.get(), std::out_of_range);

  manual_promise<void> late;
  auto from_late_inner = heddle::make_ready_future().then([g = late.get_future()]() mutable { return std::move(g); });
  std::thread t([&] { late.set_exception(std::make_exception_ptr(std::domain_error("late inner"))); });
  EXPECT_THROW(from_late_inner.get(), std::domain_error);
  t.join();

  auto empty_inner = heddle::make_ready_future(1).then([](int) { return heddle::future<int>(); });
  EXPECT_THROW(empty_inner.get(), heddle::invalid_future);
}

TEST(Unwrap, NestedFuturesUnwrapOneLevelPerThen) {
  heddle::future<heddle::future<int>> nested = heddle::task([] { return heddle::task([] { return 8; }); });
  auto flat = std::move(nested).then([](heddle::future<int> f) { return f; });
  static_assert(std::is_same_v<decltype(flat), heddle::future<int>>);
  EXPECT_EQ(*flat, 8);
}

// An asynchronous loop: each step's continuation returns the next step's future. The chain is
// `depth` records long, and no thread waits on any of them; on 1, 2 and 4 workers.
heddle::future<long> count_down(int n, long acc) {
  if (n == 0) return heddle::make_ready_future(acc);
  return heddle::task([n] { return static_cast<long>(n); }).then([n, acc](long v) {
    return count_down(n - 1, acc + v);
  });
}

TEST(Unwrap, StressAsynchronousLoops) {
  const int depth = scaled(2000, 300);
  for (unsigned threads : {1u, 2u, 4u}) {
    heddle::runtime rt(threads);
    heddle_test::watchdog dog("unwrap loops", std::chrono::seconds(60));
    std::vector<heddle::future<long>> loops;
    for (int i = 0; i < 8; ++i)
      loops.push_back(rt.task([n = depth + i] { return count_down(n, 0); }).then([](heddle::future<long> f) {
        return f;
      }));
    for (int i = 0; i < 8; ++i) {
      const long n = depth + i;
      EXPECT_EQ(*loops[i], n * (n + 1) / 2) << threads << " workers";
    }
  }
}

// Inner futures completed by other threads while the outer continuations run on workers.
TEST(Unwrap, StressInnerFuturesFromOtherThreads) {
  heddle::runtime rt(2);
  const int rounds = scaled(2000, 200);
  heddle_test::progress_watchdog dog("unwrap from threads", std::chrono::seconds(30));
  for (int round = 0; round < rounds; ++round) {
    dog.tick();
    manual_promise<int> p;
    auto f = rt.task([round] { return round; }).then([g = p.get_future()](int v) mutable {
      return std::move(g).then([v](int w) { return v * 2 + w; });
    });
    std::thread t([&p, round] {
      if (round % 5 == 0) p.set_exception(std::make_exception_ptr(std::runtime_error("odd one")));
      else p.set_value(round);
    });
    if (round % 5 == 0) EXPECT_THROW(f.get(), std::runtime_error);
    else EXPECT_EQ(*f, 3 * round);
    t.join();
  }
}

TEST(ReadyFuture, ValuesAndVoidAreReadyAtOnce) {
  auto i = heddle::make_ready_future(5);
  static_assert(std::is_same_v<decltype(i), heddle::future<int>>);
  EXPECT_TRUE(i.is_ready());
  EXPECT_EQ(*i, 5);
  const std::string text = "text";
  auto s = heddle::make_ready_future(text);  // decays: a copy
  static_assert(std::is_same_v<decltype(s), heddle::future<std::string>>);
  EXPECT_EQ(*s, "text");
  auto u = heddle::make_ready_future(std::make_unique<int>(3));
  EXPECT_EQ(*std::move(u).get(), 3);
  auto v = heddle::make_ready_future();
  EXPECT_TRUE(v.is_ready());
  v.get();
}

TEST(ReadyFuture, ExceptionalFutures) {
  auto a = heddle::make_exceptional_future<int>(std::runtime_error("object"));
  EXPECT_TRUE(a.is_ready());
  EXPECT_THROW(a.get(), std::runtime_error);
  auto b = heddle::make_exceptional_future<std::string>(std::make_exception_ptr(std::logic_error("pointer")));
  EXPECT_THROW(b.get(), std::logic_error);
  auto c = heddle::make_exceptional_future<void>(std::out_of_range("void"));
  EXPECT_THROW(c.get(), std::out_of_range);
  std::atomic<bool> called{false};
  auto d = std::move(a).then([&](int v) {
    called = true;
    return v;
  });
  EXPECT_THROW(d.get(), std::runtime_error);
  EXPECT_FALSE(called.load());
  EXPECT_THROW((void)heddle::make_exceptional_future<int>(std::exception_ptr()), std::invalid_argument);
}

// A ready future belongs to no runtime: its successor runs on the runtime of the thread calling
// then (the calling worker's), as a promise's does.
TEST(ReadyFuture, SuccessorsRunOnTheCallersRuntime) {
  heddle::runtime rt(2);
  auto* rt_core = heddle::core_detail::access::core_of(rt);
  auto where = rt.task([] {
                   return heddle::make_ready_future(1).then([](int) {
                     auto* w = heddle::core_detail::current_worker;
                     return w ? w->core : nullptr;
                   });
                 }).then([](heddle::future<heddle::core_detail::runtime_core*> f) { return f; });
  EXPECT_EQ(*where, rt_core);
  // From a thread outside any runtime, on the default runtime.
  auto outside = heddle::make_ready_future(2).then([](int v) {
    auto* w = heddle::core_detail::current_worker;
    return w && w->core == heddle::core_detail::default_core() ? v : -1;
  });
  EXPECT_EQ(*outside, 2);
}

}  // namespace
