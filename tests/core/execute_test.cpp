// SPDX-License-Identifier: Apache-2.0
// heddle::this_worker (index, runtime), heddle::current_runtime and runtime::execute: inside and
// outside the workers, from a worker of another runtime, nesting, exceptions, stress.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <heddle/core.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::watchdog;

TEST(ThisWorker, OutsideAnyRuntime) {
  EXPECT_EQ(heddle::this_worker::index(), -1);
  EXPECT_EQ(heddle::this_worker::runtime(), nullptr);
  EXPECT_EQ(&heddle::current_runtime(), &heddle::default_runtime());
}

TEST(ThisWorker, InsideTasksOfEachWorkerCount) {
  watchdog dog("ThisWorker.InsideTasksOfEachWorkerCount", 60s);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime rt(n);
    std::vector<heddle::future<std::pair<int, heddle::runtime*>>> fs;
    for (int i = 0; i < 2000; ++i)
      fs.push_back(rt.task([] { return std::pair(heddle::this_worker::index(), heddle::this_worker::runtime()); }));
    for (auto& f : fs) {
      auto [index, owner] = f.get();
      EXPECT_GE(index, 0);
      EXPECT_LT(index, static_cast<int>(n));
      EXPECT_EQ(owner, &rt);
    }
    // Inside a task, current_runtime() is the worker's.
    EXPECT_EQ(rt.task([] { return &heddle::current_runtime(); }).get(), &rt);
  }
}

TEST(ThisWorker, DefaultRuntimeIsARuntimeToo) {
  EXPECT_EQ(heddle::task([] { return heddle::this_worker::runtime(); }).get(), &heddle::default_runtime());
}

TEST(ThisWorker, TaskOfAnotherRuntimeSeesItsOwn) {
  heddle::runtime a(2), b(2);
  auto seen = a.task([&] {
                 auto inner = b.task([] { return heddle::this_worker::runtime(); }).get();
                 return std::pair(heddle::this_worker::runtime(), inner);
               }).get();
  EXPECT_EQ(seen.first, &a);
  EXPECT_EQ(seen.second, &b);
}

TEST(Execute, ReturnsWhatFReturns) {
  heddle::runtime rt(2);
  EXPECT_EQ(rt.execute([] { return 42; }), 42);
  int x = 1;
  int& r = rt.execute([&]() -> int& { return x; });
  EXPECT_EQ(&r, &x);
  bool ran = false;
  rt.execute([&] { ran = true; });
  EXPECT_TRUE(ran);
  auto moved = rt.execute([] { return std::make_unique<int>(7); });
  EXPECT_EQ(*moved, 7);
}

// From outside the runtime: heddle::task, task_group() and parallel_for inside execute land on rt.
TEST(Execute, CallsInsideUseTheRuntime) {
  watchdog dog("Execute.CallsInsideUseTheRuntime", 60s);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime rt(n);
    const auto before = rt.stats();
    std::atomic<int> elsewhere{0};
    std::atomic<int> ran{0};
    rt.execute([&] {
      EXPECT_EQ(&heddle::current_runtime(), &rt);
      EXPECT_EQ(heddle::this_worker::index(), -1);  // the caller stays an outsider
      std::vector<heddle::future<heddle::runtime*>> fs;
      for (int i = 0; i < 100; ++i) fs.push_back(heddle::task([] { return heddle::this_worker::runtime(); }));
      for (auto& f : fs) EXPECT_EQ(f.get(), &rt);
      heddle::task_group g;
      for (int i = 0; i < 100; ++i)
        g.run([&] {
          if (heddle::this_worker::runtime() != &rt) elsewhere++;
          ran++;
        });
      g.wait();
      heddle::parallel_for(0, 1000, [&](int) {
        if (heddle::this_worker::runtime() != &rt) elsewhere++;
        ran++;
      });
      EXPECT_EQ(heddle::stats().workers, n);  // heddle::stats() reads the current runtime
    });
    EXPECT_EQ(elsewhere.load(), 0);
    EXPECT_EQ(ran.load(), 1100);
    EXPECT_GE(rt.stats().injected - before.injected, 200u);  // the 100 tasks and the 100 group tasks
    EXPECT_EQ(&heddle::current_runtime(), &heddle::default_runtime());
  }
}

TEST(Execute, Nests) {
  heddle::runtime a(1), b(2);
  a.execute([&] {
    EXPECT_EQ(&heddle::current_runtime(), &a);
    b.execute([&] {
      EXPECT_EQ(&heddle::current_runtime(), &b);
      EXPECT_EQ(heddle::task([] { return heddle::this_worker::runtime(); }).get(), &b);
      a.execute([&] { EXPECT_EQ(&heddle::current_runtime(), &a); });
      EXPECT_EQ(&heddle::current_runtime(), &b);
    });
    EXPECT_EQ(&heddle::current_runtime(), &a);
    EXPECT_EQ(heddle::task([] { return heddle::this_worker::runtime(); }).get(), &a);
  });
  EXPECT_EQ(&heddle::current_runtime(), &heddle::default_runtime());
}

TEST(Execute, ExceptionsPropagateAndRestore) {
  heddle::runtime a(2), b(2);
  EXPECT_THROW(a.execute([]() -> int { throw std::runtime_error("boom"); }), std::runtime_error);
  EXPECT_EQ(&heddle::current_runtime(), &heddle::default_runtime());
  a.execute([&] {
    try {
      b.execute([&] {
        EXPECT_EQ(&heddle::current_runtime(), &b);
        heddle::task_group g;
        g.run([] { throw std::logic_error("from a task"); });
        g.wait();
      });
      ADD_FAILURE() << "the group's exception did not propagate";
    } catch (const std::logic_error& e) {
      EXPECT_STREQ(e.what(), "from a task");
    }
    EXPECT_EQ(&heddle::current_runtime(), &a);
  });
  EXPECT_EQ(&heddle::current_runtime(), &heddle::default_runtime());
}

// On one of rt's own workers execute is just f(): the worker stays a worker.
TEST(Execute, FromItsOwnWorker) {
  heddle::runtime rt(2);
  auto r = rt.task([&] {
               const int before = heddle::this_worker::index();
               return rt.execute([&] {
                 return heddle::this_worker::index() == before && heddle::this_worker::runtime() == &rt &&
                        &heddle::current_runtime() == &rt;
               });
             }).get();
  EXPECT_TRUE(r);
}

// From a worker of another runtime: f runs on that worker's thread, acting as an outsider of rt;
// what it spawns goes to rt (not to the worker's own deque), and it waits by sleeping.
TEST(Execute, FromAWorkerOfAnotherRuntime) {
  watchdog dog("Execute.FromAWorkerOfAnotherRuntime", 60s);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime a(n), b(n);
    const auto before = b.stats();
    std::atomic<int> elsewhere{0};
    const bool ok = a.task([&] {
                       const int index = heddle::this_worker::index();
                       const std::thread::id me = std::this_thread::get_id();
                       bool inside_ok = b.execute([&] {
                         bool ok = heddle::this_worker::index() == -1 && heddle::this_worker::runtime() == nullptr &&
                                   &heddle::current_runtime() == &b && std::this_thread::get_id() == me;
                         std::vector<heddle::future<heddle::runtime*>> fs;
                         for (int i = 0; i < 50; ++i)
                           fs.push_back(heddle::task([] { return heddle::this_worker::runtime(); }));
                         for (auto& f : fs) ok = ok && f.get() == &b;
                         heddle::task_group g;
                         for (int i = 0; i < 50; ++i)
                           g.run([&] {
                             if (heddle::this_worker::runtime() != &b) elsewhere++;
                           });
                         g.wait();
                         heddle::parallel_for(0, 200, [&](int) {
                           if (heddle::this_worker::runtime() != &b) elsewhere++;
                         });
                         return ok;
                       });
                       return inside_ok && heddle::this_worker::index() == index &&
                              heddle::this_worker::runtime() == &a && &heddle::current_runtime() == &a;
                     }).get();
    EXPECT_TRUE(ok);
    EXPECT_EQ(elsewhere.load(), 0);
    EXPECT_GE(b.stats().injected - before.injected, 100u);
  }
}

// Many outsider threads enter runtimes at once, nested, and spawn into them: every task lands on
// the runtime entered, every result is counted.
TEST(Execute, Stress) {
  watchdog dog("Execute.Stress", 120s);
  heddle::runtime a(2), b(4);
  const int rounds = heddle_test::scaled(200, 30);
  std::atomic<long> sum_a{0}, sum_b{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        heddle::runtime& outer = (r + t) % 2 ? a : b;
        heddle::runtime& inner = (r + t) % 2 ? b : a;
        outer.execute([&] {
          heddle::task_group g;
          for (int i = 1; i <= 10; ++i)
            g.run([&, i] {
              if (heddle::this_worker::runtime() != &outer) wrong++;
              (&outer == &a ? sum_a : sum_b) += i;
            });
          inner.execute([&] {
            heddle::parallel_for(1, 11, [&](int i) {
              if (heddle::this_worker::runtime() != &inner) wrong++;
              (&inner == &a ? sum_a : sum_b) += i;
            });
          });
          g.wait();
        });
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(sum_a.load() + sum_b.load(), 4L * rounds * 2 * 55);
  EXPECT_EQ(sum_a.load(), 4L * rounds * 55);
}

}  // namespace
