// SPDX-License-Identifier: Apache-2.0
// heddle::promise (heddle/async/promise.hpp): values, void, exceptions, the std::future_error cases
// (broken_promise, promise_already_satisfied, future_already_retrieved, no_state), set before
// get_future, moves, then() with and without a strategy, forcing from a worker (which must help, not
// deadlock) and from other threads, and stress with promises set from 8 foreign threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "async_test_support.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using heddle::strategy;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::all_strategies;
using heddle_test::on_worker_of;

// The std::future_errc of what f throws, or a default error_code if it throws something else or nothing.
template <class F>
std::error_code future_errc_of(F&& f) {
  try {
    f();
  } catch (const std::future_error& e) {
    return e.code();
  } catch (...) {
  }
  return {};
}

TEST(Promise, SetValueThenGet) {
  heddle::promise<int> p;
  EXPECT_TRUE(p.valid());
  heddle::future<int> f = p.get_future();
  EXPECT_TRUE(f.valid());
  EXPECT_FALSE(f.is_ready());
  p.set_value(7);
  EXPECT_TRUE(f.is_ready());
  EXPECT_EQ(*f, 7);
  EXPECT_EQ(f.get(), 7);  // any number of times
}

TEST(Promise, SetBeforeGetFuture) {
  heddle::promise<std::string> p;
  p.set_value("early");
  heddle::future<std::string> f = p.get_future();
  EXPECT_TRUE(f.is_ready());
  EXPECT_EQ(*f, "early");
  // The promise may die before the future, either way round.
  heddle::future<int> g;
  {
    heddle::promise<int> q;
    q.set_value(3);
    g = q.get_future();
  }
  EXPECT_EQ(*g, 3);
  heddle::promise<int> r;
  {
    heddle::future<int> h = r.get_future();
    r.set_value(4);
    EXPECT_EQ(*h, 4);
  }
}

TEST(Promise, VoidPromise) {
  heddle::promise<void> p;
  heddle::future<void> f = p.get_future();
  EXPECT_FALSE(f.is_ready());
  p.set_value();
  EXPECT_NO_THROW(f.get());
  heddle::promise<void> q;
  q.set_value();
  EXPECT_NO_THROW(q.get_future().get());
}

TEST(Promise, MoveOnlyValue) {
  heddle::promise<std::unique_ptr<int>> p;
  auto f = p.get_future();
  p.set_value(std::make_unique<int>(11));
  std::unique_ptr<int> v = std::move(f).get();
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 11);
}

TEST(Promise, SetException) {
  heddle::promise<int> p;
  auto f = p.get_future();
  p.set_exception(std::make_exception_ptr(std::out_of_range("bad")));
  try {
    (void)*f;
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "bad");
  }
  EXPECT_THROW(*f, std::out_of_range);  // again
  heddle::promise<void> v;
  v.set_exception(std::make_exception_ptr(std::runtime_error("void")));
  EXPECT_THROW(v.get_future().get(), std::runtime_error);
  heddle::promise<int> n;
  EXPECT_THROW(n.set_exception(nullptr), std::invalid_argument);
  n.set_value(1);  // the null exception did not satisfy it
  EXPECT_EQ(*n.get_future(), 1);
}

struct throws_on_construction {
  explicit throws_on_construction(int) { throw std::length_error("constructing the value"); }
};

TEST(Promise, AValueWhoseConstructorThrowsBecomesTheError) {
  heddle::promise<throws_on_construction> p;
  auto f = p.get_future();
  EXPECT_NO_THROW(p.set_value(1));
  EXPECT_THROW(f.get(), std::length_error);
  EXPECT_EQ(future_errc_of([&] { p.set_value(2); }), std::future_errc::promise_already_satisfied);
}

TEST(Promise, BrokenPromise) {
  heddle::future<int> f;
  {
    heddle::promise<int> p;
    f = p.get_future();
  }
  ASSERT_TRUE(f.is_ready());
  EXPECT_EQ(future_errc_of([&] { (void)*f; }), std::future_errc::broken_promise);
  // void, and a promise dropped on another thread while someone waits.
  heddle::promise<void> q;
  heddle::future<void> g = q.get_future();
  std::thread t([q = std::move(q)]() mutable {
    std::this_thread::sleep_for(5ms);
    heddle::promise<void> dropped = std::move(q);
  });
  EXPECT_EQ(future_errc_of([&] { g.get(); }), std::future_errc::broken_promise);
  t.join();
  // Destroyed without ever handing out its future: nothing to report, nothing leaks.
  { heddle::promise<std::string> unused; }
  {
    heddle::promise<std::string> set_unread;
    set_unread.set_value(std::string(100, 'x'));
  }
}

TEST(Promise, AlreadySatisfied) {
  heddle::promise<int> p;
  auto f = p.get_future();
  p.set_value(1);
  EXPECT_EQ(future_errc_of([&] { p.set_value(2); }), std::future_errc::promise_already_satisfied);
  EXPECT_EQ(future_errc_of([&] { p.set_exception(std::make_exception_ptr(std::runtime_error("x"))); }),
            std::future_errc::promise_already_satisfied);
  EXPECT_EQ(*f, 1);
  heddle::promise<void> q;
  q.set_exception(std::make_exception_ptr(std::runtime_error("first")));
  EXPECT_EQ(future_errc_of([&] { q.set_value(); }), std::future_errc::promise_already_satisfied);
  EXPECT_THROW(q.get_future().get(), std::runtime_error);
}

TEST(Promise, FutureAlreadyRetrieved) {
  heddle::promise<int> p;
  auto f = p.get_future();
  EXPECT_EQ(future_errc_of([&] { (void)p.get_future(); }), std::future_errc::future_already_retrieved);
  EXPECT_EQ(future_errc_of([&] { (void)p.get_future(); }), std::future_errc::future_already_retrieved);
  p.set_value(5);
  EXPECT_EQ(*f, 5);
}

// As std::promise: once the future was retrieved, get_future says so, also after the value is set
// (before or after the first get_future).
TEST(Promise, FutureAlreadyRetrievedAfterTheValueIsSet) {
  heddle::promise<int> p;
  auto f = p.get_future();
  p.set_value(5);
  EXPECT_EQ(future_errc_of([&] { (void)p.get_future(); }), std::future_errc::future_already_retrieved);
  EXPECT_EQ(*f, 5);
  heddle::promise<int> q;
  q.set_value(6);
  auto g = q.get_future();
  EXPECT_EQ(future_errc_of([&] { (void)q.get_future(); }), std::future_errc::future_already_retrieved);
  EXPECT_EQ(*g, 6);
}

TEST(Promise, MovedFromHasNoState) {
  heddle::promise<int> a;
  heddle::promise<int> b = std::move(a);
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(b.valid());
  EXPECT_EQ(future_errc_of([&] { (void)a.get_future(); }), std::future_errc::no_state);
  EXPECT_EQ(future_errc_of([&] { a.set_value(1); }), std::future_errc::no_state);
  EXPECT_EQ(future_errc_of([&] { a.set_exception(std::make_exception_ptr(1)); }), std::future_errc::no_state);
  auto f = b.get_future();
  b.set_value(9);
  EXPECT_EQ(*f, 9);
  // The retrieved and satisfied flags move with the state.
  heddle::promise<int> c;
  auto g = c.get_future();
  heddle::promise<int> d = std::move(c);
  EXPECT_EQ(future_errc_of([&] { (void)d.get_future(); }), std::future_errc::future_already_retrieved);
  d.set_value(10);
  heddle::promise<int> e = std::move(d);
  EXPECT_EQ(future_errc_of([&] { e.set_value(11); }), std::future_errc::promise_already_satisfied);
  EXPECT_EQ(*g, 10);
}

TEST(Promise, MoveAssignmentBreaksTheOverwrittenPromise) {
  heddle::promise<int> a;
  auto fa = a.get_future();
  heddle::promise<int> b;
  auto fb = b.get_future();
  a = std::move(b);  // a's old state is abandoned unfulfilled
  EXPECT_EQ(future_errc_of([&] { (void)*fa; }), std::future_errc::broken_promise);
  a.set_value(3);
  EXPECT_EQ(*fb, 3);
  // Self-move leaves it usable.
  heddle::promise<int> c;
  auto fc = c.get_future();
  heddle::promise<int>& alias = c;
  c = std::move(alias);
  c.set_value(4);
  EXPECT_EQ(*fc, 4);
}

TEST(Promise, SetFromAnotherThreadWhileForcedFromOutside) {
  watchdog dog("Promise.SetFromAnotherThreadWhileForcedFromOutside", 60s);
  for (int round = 0; round < scaled(100, 30); ++round) {
    heddle::promise<int> p;
    auto f = p.get_future();
    std::thread t([&p, round] {
      if (round % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      p.set_value(round);
    });
    EXPECT_EQ(*f, round);
    t.join();
  }
}

// A worker forcing a promise's future must keep running tasks: the setter is queued on the same
// single-worker runtime, so sleeping instead of helping would deadlock.
TEST(Promise, ForcedFromAWorkerHelpsInsteadOfDeadlocking) {
  watchdog dog("Promise.ForcedFromAWorkerHelpsInsteadOfDeadlocking", 60s);
  heddle::runtime rt(1);
  // The setter is a task spawned by the waiter itself (on its own deque).
  auto a = rt.task([] {
    heddle::promise<int> p;
    auto f = p.get_future();
    auto setter = heddle::task([&p] { p.set_value(21); });
    const int v = *f * 2;
    setter.wait();
    return v;
  });
  EXPECT_EQ(*a, 42);
  // The setter is submitted from outside once the waiter waits (the injection queue).
  heddle::promise<int> p;
  std::atomic<bool> waiting{false};
  auto b = rt.task([&] {
    auto f = p.get_future();
    waiting = true;
    return *f + 1;
  });
  while (!waiting.load()) std::this_thread::yield();
  std::this_thread::sleep_for(2ms);
  auto setter = rt.task([&p] { p.set_value(99); });
  EXPECT_EQ(*b, 100);
  setter.get();
  // The setter is a successor of a timer on the express lane.
  auto c = rt.task([&rt] {
    heddle::promise<std::string> q;
    auto f = q.get_future();
    auto s = heddle::sleep_for(rt, 2ms).then(strategy::express, [&q] { q.set_value("from express"); });
    std::string v = *f;
    s.get();
    return v;
  });
  EXPECT_EQ(*c, "from express");
}

// Every iteration of a one-iteration-per-task loop waits for a promise that a foreign thread sets.
// A waiting worker must not run its sibling iterations nested without bound (each waits again): the
// promise is no task of its deque, so those siblings count as unrelated work, taken only within the
// stack budget. With a small stack, unbounded nesting overflows at once.
TEST(Promise, WaitsInALoopOfOneIterationTasksStayWithinTheStack) {
  watchdog dog("Promise.WaitsInALoopOfOneIterationTasksStayWithinTheStack", 120s);
  const std::size_t n = scaled<std::size_t>(20'000, 4'000);
  heddle::runtime rt(heddle::runtime_options{.threads = 2, .stack_bytes = std::size_t{256} << 10});
  std::mutex m;
  std::vector<heddle::promise<std::size_t>*> to_set;
  std::atomic<bool> done{false};
  std::thread setter([&] {
    while (!done.load()) {
      std::vector<heddle::promise<std::size_t>*> batch;
      {
        std::lock_guard lock(m);
        batch.swap(to_set);
      }
      for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->set_value(i);
      if (batch.empty()) std::this_thread::sleep_for(20us);
    }
  });
  std::atomic<std::size_t> waited{0};
  rt.task([&] {
      heddle::parallel_for(
          std::size_t{0}, n,
          [&](std::size_t) {
            heddle::promise<std::size_t> p;
            auto f = p.get_future();
            {
              std::lock_guard lock(m);
              to_set.push_back(&p);
            }
            f.get();
            waited.fetch_add(1);
          },
          1);
    }).get();
  done = true;
  setter.join();
  EXPECT_EQ(waited.load(), n);
}

// A worker that waits for a promise set by a foreign thread sleeps and is woken; the other worker
// keeps running tasks meanwhile.
TEST(Promise, ForcedFromWorkersSetByForeignThreads) {
  watchdog dog("Promise.ForcedFromWorkersSetByForeignThreads", 60s);
  heddle::runtime rt(2);
  const int n = scaled(200, 40);
  std::vector<heddle::promise<int>> ps(n);
  std::vector<heddle::future<int>> waits;
  for (int i = 0; i < n; ++i)
    waits.push_back(rt.task([f = ps[i].get_future()]() mutable { return std::move(f).get() * 3; }));
  std::thread setter([&] {
    for (int i = n - 1; i >= 0; --i) {
      if (i % 16 == 0) std::this_thread::sleep_for(100us);
      ps[i].set_value(i);
    }
  });
  long sum = 0;
  for (auto& f : waits) sum += *f;
  setter.join();
  EXPECT_EQ(sum, 3L * n * (n - 1) / 2);
}

TEST(Promise, ThenWithoutAStrategy) {
  watchdog dog("Promise.ThenWithoutAStrategy", 60s);
  heddle::runtime rt(2);
  heddle::promise<int> p;
  auto f = rt.task([&p] { return p.get_future().then([](int v) { return v * 2; }); });
  heddle::future<int> doubled = std::move(f).get();
  std::thread t([&p] { p.set_value(8); });
  EXPECT_EQ(*doubled, 16);
  t.join();
  // On an already-set promise, and on an exception (the continuation is skipped).
  heddle::promise<int> q;
  q.set_value(1);
  EXPECT_EQ(*q.get_future().then([](int v) { return v + 1; }), 2);
  heddle::promise<int> e;
  auto fe = e.get_future();
  std::atomic<bool> called{false};
  auto ce = std::move(fe).then([&](int v) {
    called = true;
    return v;
  });
  e.set_exception(std::make_exception_ptr(std::domain_error("no")));
  EXPECT_THROW(*ce, std::domain_error);
  EXPECT_FALSE(called.load());
}

TEST(Promise, ThenWithEveryStrategy) {
  watchdog dog("Promise.ThenWithEveryStrategy", 60s);
  heddle::runtime rt(2);
  for (strategy s : all_strategies) {
    // Set from a foreign thread.
    heddle::promise<int> p;
    auto f = p.get_future().then(s, [](int v) { return v + 1; });
    std::thread t([&p] { p.set_value(41); });
    EXPECT_EQ(*f, 42) << to_string(s);
    t.join();
    // Already set when then() is called.
    heddle::promise<std::string> q;
    q.set_value("a");
    EXPECT_EQ(*q.get_future().then(s, [](std::string v) { return v + "b"; }), "ab") << to_string(s);
    // An exception skips the successor and is passed on.
    heddle::promise<int> e;
    std::atomic<int> called{0};
    auto fe = e.get_future().then(s, [&](int v) {
      called++;
      return v;
    });
    e.set_exception(std::make_exception_ptr(std::underflow_error("e")));
    EXPECT_THROW(*fe, std::underflow_error) << to_string(s);
    EXPECT_EQ(called.load(), 0);
    // A broken promise reaches the successor's future.
    heddle::future<void> broken;
    {
      heddle::promise<void> b;
      broken = b.get_future().then(s, [&] { called++; });
    }
    EXPECT_EQ(future_errc_of([&] { broken.get(); }), std::future_errc::broken_promise) << to_string(s);
    EXPECT_EQ(called.load(), 0);
    // A successor that throws.
    heddle::promise<void> v;
    auto fv = v.get_future().then(s, []() -> int { throw std::overflow_error("in successor"); });
    EXPECT_NO_THROW(v.set_value());  // not even under short_task, which runs it right here
    EXPECT_THROW(*fv, std::overflow_error) << to_string(s);
  }
}

TEST(Promise, WhenAllOverPromisesAndTasks) {
  watchdog dog("Promise.WhenAllOverPromisesAndTasks", 60s);
  heddle::runtime rt(2);
  heddle::promise<int> a;
  heddle::promise<std::string> b;
  auto all = heddle::when_all(a.get_future(), b.get_future(), rt.task([] { return 2.5; }));
  auto after = std::move(all).then(strategy::normal, [&rt](std::tuple<int, std::string, double> t) {
    return on_worker_of(rt) ? std::to_string(std::get<0>(t)) + std::get<1>(t) + std::to_string(int(std::get<2>(t) * 2))
                            : std::string("off the workers");
  });
  std::thread t1([&] { b.set_value("x"); });
  std::thread t2([&] { a.set_value(1); });
  EXPECT_EQ(*after, "1x5");
  t1.join();
  t2.join();
  // One failed input fails the whole.
  std::vector<heddle::promise<int>> ps(10);
  std::vector<heddle::future<int>> fs;
  for (auto& p : ps) fs.push_back(p.get_future());
  auto v = heddle::when_all(std::move(fs));
  for (int i = 0; i < 10; ++i) {
    if (i == 6) ps[i].set_exception(std::make_exception_ptr(std::runtime_error("six")));
    else ps[i].set_value(i);
  }
  EXPECT_THROW(v.get(), std::runtime_error);
}

// Stress: 8 foreign threads fulfil thousands of promises, in an order unrelated to the waiter's, with
// values, exceptions and successors of every strategy; every result is checked.
TEST(Promise, StressSetFromEightForeignThreads) {
  watchdog dog("Promise.StressSetFromEightForeignThreads", 120s);
  heddle::runtime rt(2);
  const int threads = 8;
  const int n = scaled(16000, 1600);
  std::vector<heddle::promise<long>> ps(n);
  std::vector<heddle::future<long>> direct;
  std::vector<heddle::future<long>> chained;
  std::vector<std::atomic<int>> ran(n);
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0) {
      direct.push_back(ps[i].get_future());
    } else {
      chained.push_back(ps[i].get_future().then(all_strategies[(i / 2) % 4], [&ran, i](long v) {
        ran[i].fetch_add(1, std::memory_order_relaxed);
        return v + 1;
      }));
    }
  }
  std::atomic<int> go{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      go++;
      while (go.load() < threads) std::this_thread::yield();
      // Thread t takes every threads-th promise, from the back for odd t.
      for (int k = 0; k < n / threads; ++k) {
        const int idx = (t % 2 ? n / threads - 1 - k : k) * threads + t;
        if (idx % 10 == 3) ps[idx].set_exception(std::make_exception_ptr(std::runtime_error(std::to_string(idx))));
        else ps[idx].set_value(idx * 10L);
      }
    });
  // Meanwhile tasks force a share of the direct futures from the workers.
  auto on_workers = rt.task([&] {
    long sum = 0;
    for (std::size_t k = 0; k < direct.size(); k += 3) {
      try {
        sum += *direct[k];
      } catch (const std::runtime_error&) {
      }
    }
    return sum;
  });
  for (auto& th : ts) th.join();
  long expect_workers = 0;
  for (std::size_t k = 0; k < direct.size(); k += 3) {
    const int idx = static_cast<int>(2 * k);
    if (idx % 10 != 3) expect_workers += idx * 10L;
  }
  EXPECT_EQ(*on_workers, expect_workers);
  int wrong = 0;
  for (std::size_t k = 0; k < direct.size(); ++k) {
    const int idx = static_cast<int>(2 * k);
    try {
      const long v = *direct[k];
      if (idx % 10 == 3 || v != idx * 10L) wrong++;
    } catch (const std::runtime_error& e) {
      if (idx % 10 != 3 || std::to_string(idx) != e.what()) wrong++;
    }
  }
  for (std::size_t k = 0; k < chained.size(); ++k) {
    const int idx = static_cast<int>(2 * k + 1);
    try {
      const long v = *chained[k];
      if (idx % 10 == 3 || v != idx * 10L + 1 || ran[idx].load() != 1) wrong++;
    } catch (const std::runtime_error& e) {
      if (idx % 10 != 3 || std::to_string(idx) != e.what() || ran[idx].load() != 0) wrong++;
    }
  }
  EXPECT_EQ(wrong, 0);
}

// Stress: a promise set while the future is being forced, and while a successor is being attached,
// from the other side at the same moment.
TEST(Promise, StressSetRacingWithThenAndForce) {
  watchdog dog("Promise.StressSetRacingWithThenAndForce", 120s);
  heddle::runtime rt(2);
  const int rounds = scaled(2000, 300);
  int wrong = 0;
  for (int r = 0; r < rounds; ++r) {
    heddle::promise<int> p;
    heddle::future<int> f = p.get_future();
    std::atomic<bool> go{false};
    std::thread t([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      p.set_value(r);
    });
    go.store(true, std::memory_order_release);
    if (r % 2) {
      auto g = std::move(f).then(all_strategies[(r / 2) % 4], [](int v) { return v * 2; });
      if (*g != r * 2) wrong++;
    } else {
      if (*f != r) wrong++;
    }
    t.join();
  }
  EXPECT_EQ(wrong, 0);
}

// Futures and promises dropped in every order, with successors attached: nothing leaks (ASan) and
// the successors that can run, run.
TEST(Promise, DroppedInEveryOrder) {
  watchdog dog("Promise.DroppedInEveryOrder", 60s);
  heddle::runtime rt(2);
  std::atomic<int> ran{0};
  const int n = scaled(1000, 200);
  for (int i = 0; i < n; ++i) {
    heddle::promise<std::string> p;
    if (i % 3 == 0) {
      (void)p.get_future();  // future dropped before the value
      p.set_value(std::string(64, 'v'));
    } else if (i % 3 == 1) {
      (void)p.get_future().then(all_strategies[i % 4], [&ran](std::string s) {
        ran++;
        return s.size();
      });
      p.set_value(std::string(64, 'w'));
    } else {
      (void)p.get_future().then(all_strategies[i % 4], [&ran](std::string) { ran += 1000000; });
      // dropped unfulfilled: the successor is skipped (broken_promise)
    }
  }
  const int expect = (n + 1) / 3;
  const auto end = clock_type::now() + 20s;
  while (ran.load() < expect && clock_type::now() < end) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(ran.load(), expect);
}

}  // namespace
