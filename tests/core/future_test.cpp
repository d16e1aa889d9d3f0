// SPDX-License-Identifier: Apache-2.0
// heddle::task and heddle::future: values through * and get, future<void>, member functions,
// valid/is_ready, move-only handles and values, invalid_future, exceptions through get and wait.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <heddle/core/detail/exception_text.hpp>
#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace future_test {
namespace {

using heddle_test::serial_fib;
using heddle_test::task_fib;

static_assert(!std::is_copy_constructible_v<heddle::future<int>>);
static_assert(!std::is_copy_assignable_v<heddle::future<int>>);
static_assert(std::is_nothrow_move_constructible_v<heddle::future<int>>);
static_assert(std::is_nothrow_move_assignable_v<heddle::future<int>>);
static_assert(!std::is_copy_constructible_v<heddle::future<void>>);
static_assert(std::is_nothrow_move_constructible_v<heddle::future<void>>);
static_assert(std::is_same_v<decltype(heddle::task([] { return 1L; })), heddle::future<long>>);
static_assert(std::is_same_v<decltype(heddle::task([] {})), heddle::future<void>>);
// A task returning a reference hands back a copy of the referenced value.
static_assert(std::is_same_v<decltype(heddle::task([]() -> const std::string& {
                               static const std::string s = "x";
                               return s;
                             })),
                             heddle::future<std::string>>);

int add(int a, int b) { return a + b; }

struct accumulator {
  int base = 0;
  int plus(int x) const { return base + x; }
  void add_to(int x) { base += x; }
  std::string name(const std::string& prefix, int n) const { return prefix + std::to_string(base + n); }
};

struct custom_error : std::exception {
  explicit custom_error(int c) : code(c) {}
  const char* what() const noexcept override { return "custom_error"; }
  int code;
};

TEST(Future, StarAndGetGiveTheValue) {
  auto r = heddle::task(task_fib, 20);
  EXPECT_TRUE(r.valid());
  EXPECT_EQ(*r, serial_fib(20));
  EXPECT_EQ(r.get(), serial_fib(20));
  EXPECT_TRUE(r.is_ready());
  EXPECT_TRUE(r.valid());  // reading through an lvalue keeps the state
  EXPECT_EQ(*r, 6765);
}

TEST(Future, FreeFunctionWithArguments) {
  auto r = heddle::task(add, 40, 2);
  EXPECT_EQ(*r, 42);
  auto p = heddle::task(&add, 1, 2);
  EXPECT_EQ(p.get(), 3);
}

TEST(Future, ArgumentsAreCopiedOrMovedIn) {
  std::string s = "abc";
  auto copied = heddle::task([](std::string x) { return x + "!"; }, s);
  auto moved = heddle::task([](std::unique_ptr<int> p) { return *p * 2; }, std::make_unique<int>(21));
  s = "changed";  // the task holds its own copy
  EXPECT_EQ(*copied, "abc!");
  EXPECT_EQ(*moved, 42);
}

TEST(Future, MemberFunctionWithObjectPointer) {
  accumulator acc{100};
  auto r = heddle::task(&accumulator::plus, &acc, 23);
  EXPECT_EQ(*r, 123);
  auto n = heddle::task(&accumulator::name, &acc, std::string("n="), 5);
  EXPECT_EQ(*n, "n=105");
  // A non-const member function changes the object the pointer names.
  auto v = heddle::task(&accumulator::add_to, &acc, 7);
  v.get();
  EXPECT_EQ(acc.base, 107);
  // An object passed by value is copied into the task.
  auto c = heddle::task(&accumulator::add_to, acc, 1000);
  c.get();
  EXPECT_EQ(acc.base, 107);
}

TEST(Future, MemberFunctionsFromInsideTasks) {
  std::vector<accumulator> accs(64);
  for (int i = 0; i < 64; ++i) accs[i].base = i;
  auto total = heddle::task([&] {
    std::vector<heddle::future<int>> parts;
    for (auto& a : accs) parts.push_back(heddle::task(&accumulator::plus, &a, 1));
    int sum = 0;
    for (auto& p : parts) sum += *p;
    return sum;
  });
  EXPECT_EQ(*total, 64 * 63 / 2 + 64);
}

TEST(Future, VoidFuture) {
  std::atomic<int> hits{0};
  heddle::future<void> d = heddle::task([&] { hits.fetch_add(1); });
  EXPECT_TRUE(d.valid());
  d.get();
  EXPECT_TRUE(d.is_ready());
  EXPECT_EQ(hits.load(), 1);
  *d;  // forcing again neither reruns nor throws
  d.wait();
  EXPECT_EQ(hits.load(), 1);
}

TEST(Future, DefaultConstructedIsInvalid) {
  heddle::future<int> f;
  EXPECT_FALSE(f.valid());
  EXPECT_FALSE(f.is_ready());
  EXPECT_THROW(f.get(), heddle::invalid_future);
  EXPECT_THROW(*f, heddle::invalid_future);
  EXPECT_THROW(f.wait(), heddle::invalid_future);
  EXPECT_THROW((void)std::move(f).then([](int v) { return v; }), heddle::invalid_future);
  heddle::future<void> v;
  EXPECT_FALSE(v.valid());
  EXPECT_FALSE(v.is_ready());
  EXPECT_THROW(v.get(), heddle::invalid_future);
  EXPECT_THROW(*v, heddle::invalid_future);
  EXPECT_THROW(v.wait(), heddle::invalid_future);
  // invalid_future is a logic_error: a caller's mistake, not a task's failure.
  EXPECT_THROW(f.get(), std::logic_error);
}

TEST(Future, MovedFromIsInvalid) {
  auto a = heddle::task([] { return 7; });
  heddle::future<int> b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the contract under test
  EXPECT_TRUE(b.valid());
  EXPECT_THROW(a.get(), heddle::invalid_future);
  EXPECT_EQ(*b, 7);

  heddle::future<int> c;
  c = std::move(b);
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(*c, 7);

  // Assigning over a live future releases the state it held (ASan checks for the leak).
  auto d = heddle::task([] { return 8; });
  auto e = heddle::task([] { return 9; });
  d = std::move(e);
  EXPECT_EQ(*d, 9);
  heddle::future<int>& alias = d;
  d = std::move(alias);  // self-move keeps the state
  EXPECT_TRUE(d.valid());
  EXPECT_EQ(*d, 9);
}

TEST(Future, IsReadyNeverWaits) {
  std::atomic<bool> release{false};
  auto f = heddle::task([&] {
    while (!release.load()) std::this_thread::yield();
    return 5;
  });
  heddle_test::watchdog dog("Future.IsReadyNeverWaits", std::chrono::seconds(60));
  EXPECT_FALSE(f.is_ready());
  release = true;
  f.wait();
  EXPECT_TRUE(f.is_ready());
  EXPECT_EQ(*f, 5);
}

TEST(Future, MoveOnlyValue) {
  auto f = heddle::task([] { return std::make_unique<int>(99); });
  std::unique_ptr<int>& ref = f.get();
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(*ref, 99);
  std::unique_ptr<int> out = std::move(f).get();  // moves the value out
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(*out, 99);
  auto g = heddle::task([] { return std::make_unique<std::string>("star"); });
  std::unique_ptr<std::string> s = *std::move(g);
  EXPECT_EQ(*s, "star");
}

TEST(Future, ArrowAndConstAccess) {
  auto f = heddle::task([] { return std::string("hello"); });
  EXPECT_EQ(f->size(), 5u);
  const heddle::future<std::string>& cf = f;
  EXPECT_EQ(cf.get(), "hello");
  EXPECT_EQ(*cf, "hello");
  EXPECT_EQ(cf->front(), 'h');
  f.get() += " world";  // get() on an lvalue future is a reference into the state
  EXPECT_EQ(*f, "hello world");
}

TEST(Future, LargeCallableAndLargeResult) {
  // Both go past the block cache's size classes and take the heap path.
  std::array<int, 1000> big{};
  for (int i = 0; i < 1000; ++i) big[i] = i;
  auto sum = heddle::task([big] {
    long s = 0;
    for (int v : big) s += v;
    return s;
  });
  EXPECT_EQ(*sum, 999L * 1000 / 2);
  auto arr = heddle::task([] {
    std::array<long, 512> a{};
    for (int i = 0; i < 512; ++i) a[i] = i * 3;
    return a;
  });
  for (int i = 0; i < 512; ++i) ASSERT_EQ((*arr)[i], i * 3);
}

struct alignas(128) over_aligned {
  long v[4];
};

TEST(Future, OverAlignedResult) {
  auto f = heddle::task([] { return over_aligned{{1, 2, 3, 4}}; });
  const over_aligned& r = f.get();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&r) % 128, 0u);
  EXPECT_EQ(r.v[0] + r.v[1] + r.v[2] + r.v[3], 10);
}

TEST(Future, ExceptionThroughGetStarAndRepeatedReads) {
  auto f = heddle::task([]() -> int { throw std::runtime_error("boom"); });
  f.wait();  // wait never throws the task's exception
  EXPECT_TRUE(f.is_ready());
  try {
    (void)f.get();
    FAIL() << "get() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
  }
  EXPECT_THROW(*f, std::runtime_error);  // every read rethrows
  EXPECT_THROW(std::move(f).get(), std::runtime_error);
}

TEST(Future, ExceptionTypeIsPreserved) {
  auto f = heddle::task([]() -> std::string { throw custom_error(17); });
  try {
    (void)*f;
    FAIL() << "no exception";
  } catch (const custom_error& e) {
    EXPECT_EQ(e.code, 17);
  }
  auto v = heddle::task([] { throw std::out_of_range("void task"); });
  v.wait();
  EXPECT_THROW(v.get(), std::out_of_range);
  EXPECT_THROW(*v, std::out_of_range);
  // A non-std exception type travels too.
  auto i = heddle::task([]() -> int { throw 42; });
  try {
    (void)i.get();
    FAIL() << "no exception";
  } catch (int code) {
    EXPECT_EQ(code, 42);
  }
}

TEST(Future, ExceptionsFromNestedTasksPropagateUp) {
  auto outer = heddle::task([] {
    auto inner = heddle::task([]() -> int { throw std::invalid_argument("deep"); });
    return *inner + 1;
  });
  EXPECT_THROW(*outer, std::invalid_argument);
  // A task that catches its child's exception turns it into a value.
  auto handled = heddle::task([] {
    auto inner = heddle::task([]() -> int { throw std::runtime_error("x"); });
    try {
      return *inner;
    } catch (const std::runtime_error&) {
      return -1;
    }
  });
  EXPECT_EQ(*handled, -1);
}

TEST(Future, DroppedUnreadFuturesStillRun) {
  std::atomic<int> ran{0};
  constexpr int n = 2000;
  for (int i = 0; i < n; ++i) {
    auto f = heddle::task([&ran] {
      ran.fetch_add(1);
      return std::string(100, 'x');  // a result that owns memory: ASan checks it is freed
    });
    if (i % 2) f.wait();
  }
  // Dropped futures from inside a task too.
  auto parent = heddle::task([&ran] {
    for (int i = 0; i < n; ++i) (void)heddle::task([&ran] { ran.fetch_add(1); });
  });
  parent.get();
  heddle_test::watchdog dog("Future.DroppedUnreadFuturesStillRun", std::chrono::seconds(60));
  while (ran.load() < 2 * n) std::this_thread::yield();
  EXPECT_EQ(ran.load(), 2 * n);
}

TEST(Future, ForcedOnAnotherThreadThanItsCreator) {
  auto f = heddle::task(task_fib, 18);
  long value = 0;
  std::thread t([&value, f = std::move(f)]() mutable { value = *f; });
  t.join();
  EXPECT_EQ(value, serial_fib(18));
}

TEST(Future, FutureOfFuture) {
  // A task can hand a future it made to its caller, which forces it later from outside.
  auto outer = heddle::task([] { return heddle::task(task_fib, 15); });
  heddle::future<long> inner = std::move(outer).get();
  EXPECT_TRUE(inner.valid());
  EXPECT_EQ(*inner, serial_fib(15));
}

TEST(Future, ManyFuturesFromInsideATask) {
  auto r = heddle::task([] {
    std::vector<heddle::future<int>> fs;
    for (int i = 0; i < 10000; ++i) fs.push_back(heddle::task([i] { return i % 7; }));
    long s = 0;
    for (auto& f : fs) s += *f;
    return s;
  });
  long expect = 0;
  for (int i = 0; i < 10000; ++i) expect += i % 7;
  EXPECT_EQ(*r, expect);
}

struct throws_on_copy {
  throws_on_copy() = default;
  throws_on_copy(const throws_on_copy&) { throw std::length_error("copy"); }
  throws_on_copy& operator=(const throws_on_copy&) = default;
  int operator()() const { return 1; }
};

TEST(Future, ThrowingArgumentCopyFailsTheCallNotTheRuntime) {
  throws_on_copy c;
  EXPECT_THROW((void)heddle::task(c), std::length_error);  // the callable's copy throws
  EXPECT_THROW((void)heddle::task([](const throws_on_copy&) { return 0; }, c), std::length_error);
  auto r = heddle::task([] {
    throws_on_copy local;
    try {
      (void)heddle::task(local);  // from a worker: the record goes back to its block cache
    } catch (const std::length_error&) {
      return 7;
    }
    return 0;
  });
  EXPECT_EQ(*r, 7);
  EXPECT_EQ(*heddle::task([] { return 3; }), 3);
}

}  // namespace

// The one exception-to-text helper of the layers' reports (heddle/core/detail/exception_text.hpp).
TEST(ExceptionText, WhatWithOrWithoutTheTypeAndWhatIsNoStdException) {
  const std::exception_ptr e = std::make_exception_ptr(std::invalid_argument("bad input"));
  EXPECT_EQ(heddle::core_detail::exception_text(e), "bad input");
  EXPECT_EQ(heddle::core_detail::exception_text(e, /*with_type=*/true), "std::invalid_argument: bad input");
  const std::exception_ptr i = std::make_exception_ptr(42);
  EXPECT_EQ(heddle::core_detail::exception_text(i), "int (not a std::exception)");
  EXPECT_EQ(heddle::core_detail::exception_text(i, /*with_type=*/true), "int (not a std::exception)");
}

}  // namespace future_test
