// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_invoke: every callable once, the first exception, cancellation, runtimes.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include <heddle/heddle.hpp>

#include "algorithm_test_support.hpp"
#include "test_support.hpp"

namespace {

TEST(ParallelInvoke, EveryCallableOnce) {
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    std::atomic<int> a{0}, b{0}, c{0}, d{0};
    heddle::parallel_invoke(
        rt, [&] { a++; }, [&] { b++; }, [&] { c++; }, [&] { d++; });
    EXPECT_EQ(a + b + c + d, 4);
    EXPECT_EQ(a.load(), 1);
    EXPECT_EQ(d.load(), 1);
    int only = 0;
    heddle::parallel_invoke(rt, [&] { only = 5; });
    EXPECT_EQ(only, 5);
  }
  // Default runtime, lvalue callables, a function pointer.
  static std::atomic<int> f_calls{0};
  auto g = [] { f_calls++; };
  void (*fp)() = [] { f_calls++; };
  heddle::parallel_invoke(g, fp, g);
  EXPECT_EQ(f_calls.load(), 3);
}

long fib(long n) {
  if (n < 2) return n;
  long x = 0, y = 0;
  heddle::parallel_invoke([&] { x = fib(n - 1); }, [&] { y = fib(n - 2); });
  return x + y;
}

TEST(ParallelInvoke, RecursiveFibInsideTasks) {
  heddle_test::watchdog dog("ParallelInvoke.RecursiveFibInsideTasks", std::chrono::seconds(120));
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    EXPECT_EQ(rt.task([] { return fib(heddle_test::scaled(22L, 17L)); }).get(), heddle_test::scaled(17711L, 1597L));
  }
}

TEST(ParallelInvoke, FirstExceptionAndTheRestSkipped) {
  heddle::runtime rt(1);
  std::atomic<int> ran{0};
  // One worker, called from outside: the root runs the first callable after spawning the others;
  // once it throws, those not started are skipped.
  try {
    heddle::parallel_invoke(
        rt, [&] { throw std::runtime_error("first"); }, [&] { ran++; }, [&] { ran++; });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_EQ(ran.load(), 0);
  heddle::runtime rt2(2);
  EXPECT_THROW(heddle::parallel_invoke(
                   rt2, [] {}, [] { throw std::logic_error("second"); }),
               std::logic_error);
}

TEST(ParallelInvoke, Cancellation) {
  heddle::cancellation_source src;
  src.cancel();
  std::atomic<int> ran{0};
  EXPECT_THROW(heddle::parallel_invoke([&] { ran++; }, [&] { ran++; }, src.token()), heddle::task_cancelled);
  EXPECT_EQ(ran.load(), 0);
  heddle::runtime rt(1);
  heddle::cancellation_source during;
  EXPECT_THROW(heddle::parallel_invoke(
                   rt, during.token(), [&] { during.cancel(); }, [&] { ran++; }),
               heddle::task_cancelled);
  EXPECT_EQ(ran.load(), 0);  // one worker: the second had not started when the first cancelled
}

}  // namespace
