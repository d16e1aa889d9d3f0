// SPDX-License-Identifier: Apache-2.0
// heddle::task_group and cancellation: run/wait, the first exception rethrown, cancel() skipping
// tasks that have not started, tokens, reuse after wait, cancellation_source.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace task_group_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::watchdog;

// Spins (yielding) until flag is set; the watchdog of the calling test catches a flag never set.
void await_flag(const std::atomic<bool>& flag) {
  while (!flag.load()) std::this_thread::yield();
}

TEST(TaskGroup, RunAndWait) {
  std::atomic<int> n{0};
  heddle::task_group g;
  for (int i = 0; i < 1000; ++i) g.run([&] { n++; });
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
  EXPECT_EQ(n.load(), 1000);
  EXPECT_FALSE(g.is_cancelling());
}

TEST(TaskGroup, WaitOnAnEmptyGroup) {
  heddle::task_group g;
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
}

TEST(TaskGroup, MoveOnlyAndLvalueCallables) {
  std::atomic<int> n{0};
  heddle::task_group g;
  auto p = std::make_unique<int>(5);
  g.run([&n, p = std::move(p)] { n += *p; });
  auto add_one = [&n] { n += 1; };
  g.run(add_one);  // an lvalue is copied
  g.run(add_one);
  g.wait();
  EXPECT_EQ(n.load(), 7);
}

TEST(TaskGroup, RecursiveFibWithGroupsInsideTasks) {
  struct fib {
    static long run(int n) {
      if (n < 2) return n;
      long a = 0, b = 0;
      heddle::task_group g;
      g.run([&] { a = run(n - 1); });
      g.run([&] { b = run(n - 2); });
      g.wait();
      return a + b;
    }
  };
  auto r = heddle::task(fib::run, 22);
  EXPECT_EQ(*r, heddle_test::serial_fib(22));
}

TEST(TaskGroup, FirstExceptionIsRethrownAndCancelsTheGroup) {
  heddle::task_group g;
  std::atomic<int> ok{0};
  for (int i = 0; i < 100; ++i)
    g.run([&ok, i] {
      if (i % 10 == 3) throw std::runtime_error("task " + std::to_string(i));
      ok++;
    });
  try {
    g.wait();
    FAIL() << "wait() did not rethrow";
  } catch (const std::runtime_error& e) {
    // Exactly one of the thrown exceptions comes back, unchanged.
    const std::string what = e.what();
    std::set<std::string> thrown;
    for (int i = 3; i < 100; i += 10) thrown.insert("task " + std::to_string(i));
    EXPECT_TRUE(thrown.count(what)) << what;
  }
  EXPECT_LE(ok.load(), 90);
  // The error was collected: the next wait reports a clean, uncancelled group.
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
}

TEST(TaskGroup, ExceptionSkipsTasksNotYetStarted) {
  // One worker takes submissions from outside in order: the throwing task runs first, and every
  // task queued behind it is skipped.
  heddle::runtime rt(1);
  heddle::task_group g(rt);
  std::atomic<int> later{0};
  g.run([] { throw std::logic_error("first"); });
  for (int i = 0; i < 100; ++i) g.run([&] { later++; });
  EXPECT_THROW(g.wait(), std::logic_error);
  EXPECT_EQ(later.load(), 0);
}

TEST(TaskGroup, CancelSkipsUnstartedTasks) {
  watchdog dog("TaskGroup.CancelSkipsUnstartedTasks", 60s);
  heddle::runtime rt(1);
  heddle::task_group g(rt);
  std::atomic<bool> started{false}, release{false};
  std::atomic<int> first_done{0}, later{0};
  g.run([&] {
    started = true;
    await_flag(release);
    first_done++;  // a running task finishes even when the group is cancelled
  });
  await_flag(started);
  for (int i = 0; i < 100; ++i) g.run([&] { later++; });
  g.cancel();
  EXPECT_TRUE(g.is_cancelling());
  release = true;
  EXPECT_EQ(g.wait(), heddle::task_group_status::cancelled);
  EXPECT_EQ(first_done.load(), 1);
  EXPECT_EQ(later.load(), 0);
}

// docs/core.md: wait() reports a cancellation made at any point since the last wait(), also one
// made after the last task finished or in a group that ran nothing, and the flag is set from
// cancel() until that wait().
TEST(TaskGroup, WaitReportsACancellationMadeAfterTheLastTaskFinished) {
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  std::atomic<int> n{0};
  for (int i = 0; i < 10; ++i) g.run([&] { n++; });
  while (n.load() != 10) std::this_thread::yield();
  g.cancel();
  EXPECT_TRUE(g.is_cancelling());
  EXPECT_TRUE(g.token().cancelled());
  EXPECT_EQ(g.wait(), heddle::task_group_status::cancelled);
  EXPECT_FALSE(g.is_cancelling());
  EXPECT_EQ(n.load(), 10);

  g.cancel();  // nothing run at all
  EXPECT_EQ(g.wait(), heddle::task_group_status::cancelled);
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);  // reset by the wait before
}

TEST(TaskGroup, RunningTasksSeeCancellationThroughTheToken) {
  watchdog dog("TaskGroup.RunningTasksSeeCancellationThroughTheToken", 60s);
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  heddle::cancellation_token tok = g.token();
  EXPECT_FALSE(tok.cancelled());
  EXPECT_FALSE(static_cast<bool>(tok));
  std::atomic<int> running{0}, saw_cancel{0};
  for (int i = 0; i < 2; ++i)
    g.run([&, tok] {
      running++;
      while (!tok.cancelled()) std::this_thread::yield();
      saw_cancel++;
    });
  while (running.load() < 2) std::this_thread::yield();
  g.cancel();
  EXPECT_TRUE(tok.cancelled());
  EXPECT_TRUE(static_cast<bool>(tok));
  EXPECT_EQ(g.wait(), heddle::task_group_status::cancelled);
  EXPECT_EQ(saw_cancel.load(), 2);
}

TEST(TaskGroup, TaskCancelsItsOwnGroup) {
  watchdog dog("TaskGroup.TaskCancelsItsOwnGroup", 60s);
  heddle::runtime rt(1);
  heddle::task_group g(rt);
  std::atomic<int> after{0};
  g.run([&g] { g.cancel(); });
  for (int i = 0; i < 50; ++i) g.run([&] { after++; });
  EXPECT_EQ(g.wait(), heddle::task_group_status::cancelled);
  EXPECT_EQ(after.load(), 0);
}

TEST(TaskGroup, ReuseAfterWait) {
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  std::atomic<int> n{0};
  for (int round = 0; round < 20; ++round) {
    const int before = n.load();
    for (int i = 0; i < 50; ++i) g.run([&] { n++; });
    switch (round % 3) {
      case 0:
        EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
        EXPECT_EQ(n.load(), before + 50);
        break;
      case 1:
        g.run([] { throw std::runtime_error("round"); });
        EXPECT_THROW(g.wait(), std::runtime_error);
        break;
      case 2:
        g.cancel();
        EXPECT_EQ(g.wait(), heddle::task_group_status::cancelled);
        break;
    }
    // Whatever happened, the group starts the next round clean.
    EXPECT_FALSE(g.is_cancelling());
    EXPECT_FALSE(g.token().cancelled());
  }
  std::atomic<int> last{0};
  for (int i = 0; i < 10; ++i) g.run([&] { last++; });
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
  EXPECT_EQ(last.load(), 10);
}

TEST(TaskGroup, DestructorWaitsForRunningTasks) {
  std::atomic<int> n{0};
  {
    heddle::task_group g;
    for (int i = 0; i < 200; ++i)
      g.run([&] {
        std::this_thread::sleep_for(50us);
        n++;
      });
  }  // no wait(): the destructor waits
  EXPECT_EQ(n.load(), 200);
  std::atomic<bool> threw{false};
  {
    heddle::task_group g;
    g.run([&] {
      threw = true;
      throw std::runtime_error("never collected");
    });
  }  // an uncollected exception is dropped, not thrown from the destructor (which would terminate)
  EXPECT_TRUE(threw.load());
}

TEST(TaskGroup, ExplicitRuntimeRunsTheTasks) {
  heddle::runtime rt(2);
  const auto before = rt.stats();
  heddle::task_group g(rt);
  std::atomic<int> on_main{0}, n{0};
  const auto main_id = std::this_thread::get_id();
  for (int i = 0; i < 100; ++i)
    g.run([&] {
      if (std::this_thread::get_id() == main_id) on_main++;
      n++;
    });
  g.wait();
  EXPECT_EQ(n.load(), 100);
  EXPECT_EQ(on_main.load(), 0);  // a foreign thread only sleeps in wait()
  const auto after = rt.stats();
  EXPECT_GE(after.injected - before.injected, 100u);
  EXPECT_GE(after.executed - before.executed, 100u);
}

TEST(TaskGroup, WaitFromInsideATaskHelps) {
  // One worker: if the waiting task did not run the group's tasks itself, nothing would.
  watchdog dog("TaskGroup.WaitFromInsideATaskHelps", 60s);
  heddle::runtime rt(1);
  auto r = rt.task([] {
    std::atomic<int> n{0};
    heddle::task_group g;
    for (int i = 0; i < 1000; ++i) g.run([&] { n++; });
    g.wait();
    return n.load();
  });
  EXPECT_EQ(*r, 1000);
}

TEST(TaskGroup, NestedGroupsAndFutures) {
  auto r = heddle::task([] {
    std::atomic<long> total{0};
    heddle::task_group outer;
    for (int i = 0; i < 20; ++i)
      outer.run([&total, i] {
        heddle::task_group inner;
        std::vector<heddle::future<long>> fs;
        for (int j = 0; j < 20; ++j) fs.push_back(heddle::task(heddle_test::task_fib, (i + j) % 12));
        for (auto& f : fs) inner.run([&total, &f] { total += *f; });
        inner.wait();
      });
    outer.wait();
    return total.load();
  });
  long expect = 0;
  for (int i = 0; i < 20; ++i)
    for (int j = 0; j < 20; ++j) expect += heddle_test::serial_fib((i + j) % 12);
  EXPECT_EQ(*r, expect);
}

TEST(TaskGroup, WaitFromManyForeignThreads) {
  watchdog dog("TaskGroup.WaitFromManyForeignThreads", 120s);
  heddle::runtime rt(2);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&rt, &good, t] {
      for (int round = 0; round < 50; ++round) {
        heddle::task_group g(rt);
        std::atomic<int> n{0};
        for (int i = 0; i < 20 + t; ++i) g.run([&] { n++; });
        if (g.wait() == heddle::task_group_status::complete && n.load() == 20 + t) good++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 4 * 50);
}

struct throws_on_copy {
  throws_on_copy() = default;
  throws_on_copy(const throws_on_copy&) { throw std::length_error("copy"); }
  throws_on_copy& operator=(const throws_on_copy&) = default;
  void operator()() const {}
};

TEST(TaskGroup, ThrowingCallableCopyFailsRunNotTheGroup) {
  heddle::task_group g;
  std::atomic<int> n{0};
  g.run([&] { n++; });
  throws_on_copy c;
  EXPECT_THROW(g.run(c), std::length_error);
  g.run([&] { n++; });
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);  // the failed run left no count behind
  EXPECT_EQ(n.load(), 2);
}

TEST(TaskGroup, TasksAddToTheirOwnGroup) {
  // Members run more members of the same group while the owner already waits: a tree of
  // 3^depth leaves in one group with a single wait, from outside and from inside a task.
  struct tree {
    static void grow(heddle::task_group& g, std::atomic<long>& leaves, int depth) {
      if (depth == 0) {
        leaves++;
        return;
      }
      for (int k = 0; k < 3; ++k) g.run([&g, &leaves, depth] { grow(g, leaves, depth - 1); });
    }
  };
  constexpr int depth = heddle_test::scaled(10, 9);
  long expect = 1;
  for (int i = 0; i < depth; ++i) expect *= 3;
  {
    heddle::task_group g;
    std::atomic<long> leaves{0};
    g.run([&] { tree::grow(g, leaves, depth); });
    EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
    EXPECT_EQ(leaves.load(), expect);
  }
  auto inside = heddle::task([] {
    heddle::task_group g;
    std::atomic<long> leaves{0};
    tree::grow(g, leaves, depth);
    g.wait();
    return leaves.load();
  });
  EXPECT_EQ(*inside, expect);
}

TEST(Cancellation, DefaultTokenIsNeverCancelled) {
  heddle::cancellation_token tok;
  EXPECT_FALSE(tok.cancelled());
  EXPECT_FALSE(static_cast<bool>(tok));
}

TEST(Cancellation, SourceAndTokens) {
  heddle::cancellation_source src;
  auto a = src.token();
  auto b = a;  // copies share the flag
  EXPECT_FALSE(src.cancelled());
  EXPECT_FALSE(a.cancelled());
  src.cancel();
  EXPECT_TRUE(src.cancelled());
  EXPECT_TRUE(a.cancelled());
  EXPECT_TRUE(b.cancelled());
  src.cancel();  // idempotent
  EXPECT_TRUE(b.cancelled());
  heddle::cancellation_source other;
  EXPECT_FALSE(other.token().cancelled());  // sources are independent
}

TEST(Cancellation, TokenOutlivesItsSource) {
  heddle::cancellation_token tok;
  {
    heddle::cancellation_source src;
    tok = src.token();
    src.cancel();
  }
  EXPECT_TRUE(tok.cancelled());  // ASan checks that the flag is still alive
  heddle::cancellation_token fresh;
  {
    heddle::cancellation_source src;
    fresh = src.token();
  }
  EXPECT_FALSE(fresh.cancelled());
}

TEST(Cancellation, TasksPollASourceFromAnotherThread) {
  watchdog dog("Cancellation.TasksPollASourceFromAnotherThread", 60s);
  heddle::cancellation_source src;
  std::atomic<int> started{0};
  std::vector<heddle::future<long>> fs;
  for (int i = 0; i < 2; ++i)
    fs.push_back(heddle::task([tok = src.token(), &started] {
      started++;
      long spins = 0;
      while (!tok) {
        ++spins;
        std::this_thread::yield();
      }
      return spins;
    }));
  while (started.load() < static_cast<int>(std::min<unsigned>(2, heddle::default_runtime().num_threads())))
    std::this_thread::yield();
  std::thread canceller([&] { src.cancel(); });
  canceller.join();
  for (auto& f : fs) EXPECT_GE(*f, 0);
  EXPECT_TRUE(src.cancelled());
}

}  // namespace

}  // namespace task_group_test
