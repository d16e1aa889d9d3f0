// SPDX-License-Identifier: Apache-2.0
// task_group::wait_async: the future of a group's end — its status and first exception as wait()
// gives them, the group reset after it, awaited by a coroutine (which holds no worker meanwhile),
// by `then` and by get(); ready at once with no task unfinished; one wait at a time; a group
// destroyed or waited for while a wait_async is armed; and many groups whose tasks add tasks while
// their wait is armed, every count checked.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::watchdog;

TEST(TaskGroupWaitAsync, CompletesOnceEveryTaskHasFinished) {
  watchdog dog("TaskGroupWaitAsync.CompletesOnceEveryTaskHasFinished", 60s);
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  std::atomic<int> n{0};
  std::atomic<bool> release{false};
  for (int i = 0; i < 100; ++i)
    g.run([&] {
      while (!release.load()) std::this_thread::yield();
      n++;
    });
  heddle::future<heddle::task_group_status> f = g.wait_async();
  EXPECT_FALSE(f.is_ready());  // every task waits for `release`
  release = true;
  EXPECT_EQ(f.get(), heddle::task_group_status::complete);
  EXPECT_EQ(n.load(), 100);
}

TEST(TaskGroupWaitAsync, ReadyAtOnceWithNoTaskUnfinished) {
  heddle::runtime rt(1);
  heddle::task_group g(rt);
  heddle::future<heddle::task_group_status> f = g.wait_async();
  EXPECT_TRUE(f.is_ready());
  EXPECT_EQ(f.get(), heddle::task_group_status::complete);
  g.run([] {});
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
  EXPECT_EQ(g.wait_async().get(), heddle::task_group_status::complete);
}

TEST(TaskGroupWaitAsync, TheFirstExceptionFailsTheFutureAndTheGroupIsReset) {
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  g.run([] { throw std::runtime_error("first"); });
  heddle::future<heddle::task_group_status> f = g.wait_async();
  try {
    f.get();
    FAIL() << "the future did not fail";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  // Reset as after wait(): not cancelling, no error left; the group runs again.
  EXPECT_FALSE(g.is_cancelling());
  std::atomic<int> n{0};
  g.run([&] { n++; });
  EXPECT_EQ(g.wait_async().get(), heddle::task_group_status::complete);
  EXPECT_EQ(n.load(), 1);
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);
}

TEST(TaskGroupWaitAsync, ACancelledGroupReportsCancelled) {
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  std::atomic<bool> started{false}, release{false};
  std::atomic<int> ran{0};
  g.run([&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
  g.cancel();
  // Run after cancel(): skipped, as the first task holds the count above zero until the wait.
  for (int i = 0; i < 10; ++i) g.run([&] { ran++; });
  heddle::future<heddle::task_group_status> f = g.wait_async();
  release = true;
  EXPECT_EQ(f.get(), heddle::task_group_status::cancelled);
  EXPECT_FALSE(g.is_cancelling());
  EXPECT_EQ(ran.load(), 0);
}

TEST(TaskGroupWaitAsync, OneWaitAtATime) {
  heddle::runtime rt(2);
  heddle::task_group g(rt);
  std::atomic<bool> release{false};
  g.run([&] {
    while (!release.load()) std::this_thread::yield();
  });
  heddle::future<heddle::task_group_status> f = g.wait_async();
  EXPECT_THROW((void)g.wait_async(), std::logic_error);
  release = true;
  EXPECT_EQ(f.get(), heddle::task_group_status::complete);
}

TEST(TaskGroupWaitAsync, ThenRunsOnTheGroupsRuntime) {
  heddle::runtime rt(3);  // not the default runtime's size on the project's 2-core machines
  heddle::task_group g(rt);
  std::atomic<int> n{0};
  for (int i = 0; i < 50; ++i) g.run([&] { n++; });
  heddle::future<int> f = g.wait_async().then([&](heddle::task_group_status s) {
    EXPECT_EQ(s, heddle::task_group_status::complete);
    EXPECT_EQ(heddle::current_runtime().num_threads(), 3u);
    return n.load();
  });
  EXPECT_EQ(f.get(), 50);
}

// The group lives in the coroutine's frame; its tasks sleep 100 µs each, so the coroutine suspends
// on the wait while they run.
heddle::co_task<int> sum_in_a_group(int tasks) {
  heddle::task_group g;
  std::atomic<int> sum{0};
  for (int i = 1; i <= tasks; ++i)
    g.run([&sum, i] {
      std::this_thread::sleep_for(100us);
      sum += i;
    });
  const heddle::task_group_status s = co_await g.wait_async();
  if (s != heddle::task_group_status::complete) throw std::logic_error("the group was cancelled");
  co_return sum.load();
}

TEST(TaskGroupWaitAsync, ACoroutineAwaitsItsGroup) {
  watchdog dog("TaskGroupWaitAsync.ACoroutineAwaitsItsGroup", 60s);
  for (unsigned threads : {1u, 2u, 4u}) {
    heddle::runtime rt(threads);
    std::vector<heddle::future<int>> fs;
    for (int c = 0; c < 20; ++c) fs.push_back(rt.spawn(sum_in_a_group(40)));
    for (auto& f : fs) EXPECT_EQ(f.get(), 40 * 41 / 2) << threads << " threads";
  }
}

heddle::co_task<std::string> failing_group() {
  heddle::task_group g;
  g.run([] { throw std::runtime_error("from a task"); });
  try {
    co_await g.wait_async();
  } catch (const std::runtime_error& e) {
    co_return e.what();
  }
  co_return "no exception";
}

TEST(TaskGroupWaitAsync, ACoroutineSeesTheGroupsException) {
  heddle::runtime rt(2);
  EXPECT_EQ(rt.spawn(failing_group()).get(), "from a task");
}

// The destructor (and a wait()) with a wait_async armed waits for the tasks and until the armed
// wait has taken the group's result; the future, kept past the group, holds it.
TEST(TaskGroupWaitAsync, AGroupDestroyedOrWaitedForWhileItsWaitIsArmed) {
  watchdog dog("TaskGroupWaitAsync.AGroupDestroyedOrWaitedForWhileItsWaitIsArmed", 60s);
  heddle::runtime rt(2);
  std::atomic<int> n{0};
  heddle::future<heddle::task_group_status> f;
  {
    heddle::task_group g(rt);
    for (int i = 0; i < 20; ++i)
      g.run([&] {
        std::this_thread::sleep_for(1ms);
        n++;
      });
    f = g.wait_async();
  }
  EXPECT_EQ(n.load(), 20);
  EXPECT_EQ(f.get(), heddle::task_group_status::complete);

  heddle::task_group g(rt);
  g.run([] {
    std::this_thread::sleep_for(1ms);
    throw std::runtime_error("taken by the armed wait");
  });
  heddle::future<heddle::task_group_status> armed = g.wait_async();
  EXPECT_EQ(g.wait(), heddle::task_group_status::complete);  // the armed wait took the error
  EXPECT_THROW(armed.get(), std::runtime_error);

  // On a worker of a runtime of one: the destructor runs the group's tasks itself.
  EXPECT_EQ(heddle::runtime(1).execute([] {
    std::atomic<int> k{0};
    heddle::future<heddle::task_group_status> w;
    {
      heddle::task_group inner;
      for (int i = 0; i < 10; ++i) inner.run([&] { k++; });
      w = inner.wait_async();
    }
    return k.load() == 10 && w.get() == heddle::task_group_status::complete;
  }),
            true);
}

// Groups whose tasks run more tasks into the same group while a wait_async is armed, awaited by
// coroutines from every worker: each wait completes once, after every task of its round.
heddle::co_task<long> tree_in_a_group(int depth, int fanout) {
  heddle::task_group g;
  std::atomic<long> leaves{0};
  struct grower {
    heddle::task_group* g;
    std::atomic<long>* leaves;
    int fanout;
    void operator()(int d) const {
      if (d == 0) {
        leaves->fetch_add(1);
        return;
      }
      for (int i = 0; i < fanout; ++i) g->run([self = *this, d] { self(d - 1); });
    }
  };
  const grower grow{&g, &leaves, fanout};
  g.run([grow, depth] { grow(depth); });
  co_await g.wait_async();
  co_return leaves.load();
}

TEST(TaskGroupWaitAsync, StressTasksAddTasksWhileTheWaitIsArmed) {
  watchdog dog("TaskGroupWaitAsync.StressTasksAddTasksWhileTheWaitIsArmed", 120s);
  const int rounds = scaled(2000, 200);
  heddle::runtime rt(4);
  for (int r = 0; r < rounds; ++r) {
    std::vector<heddle::future<long>> fs;
    for (int c = 0; c < 8; ++c) fs.push_back(rt.spawn(tree_in_a_group(4, 3)));
    for (auto& f : fs) ASSERT_EQ(f.get(), 81) << "round " << r;  // 3^4 leaves
  }
}

}  // namespace
