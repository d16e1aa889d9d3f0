// SPDX-License-Identifier: Apache-2.0
// heddle::isolate: the deadlock it prevents (a worker holds a mutex around a parallel loop and,
// while it waits, runs an unrelated task that takes the same mutex), nested regions, exceptions,
// the region carried to tasks other workers steal, regions entered outside the runtime.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <heddle/core.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using heddle_test::watchdog;

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// How deep the calling thread is inside the locked region's waits (the region's own wait, and the
// waits of its tasks): an outer task that starts while it is above 0 is an unrelated task run
// inside such a wait.
thread_local int inside_region = 0;

struct scenario {
  std::mutex m;
  std::atomic<std::thread::id> owner{};
  std::atomic<int> unrelated_inside{0};  // outer items that started inside a region's wait
  std::atomic<long> inner_sum{0};
  std::atomic<int> outer_done{0};
};

// One item of the outer loop: takes the mutex and runs an inner parallel loop while holding it.
// An item that starts on the thread that holds the mutex, or inside a region's wait, would (with
// a real lock) deadlock or block a wait the mutex holder depends on: it is counted and skipped
// instead, so that the test shows the event without deadlocking.
void outer_item(scenario& s, bool isolated, bool nested_waits) {
  if (s.owner.load() == std::this_thread::get_id() || inside_region > 0) {
    s.unrelated_inside++;
    return;
  }
  std::lock_guard lock(s.m);
  s.owner.store(std::this_thread::get_id());
  auto inner = [&] {
    ++inside_region;
    heddle::parallel_for(
        0, 16,
        [&](int i) {
          spin_for(std::chrono::microseconds(20));
          if (nested_waits) {
            // A wait inside a task of the region, on whatever worker runs it.
            ++inside_region;
            heddle::parallel_for(
                0, 4, [&](int j) { s.inner_sum += j; }, 1);
            --inside_region;
          }
          s.inner_sum += i;
        },
        1);
    --inside_region;
  };
  if (isolated) heddle::isolate(inner);
  else inner();
  s.owner.store(std::thread::id{});
  s.outer_done++;
}

void run_scenario(heddle::runtime& rt, scenario& s, int items, bool isolated, bool nested_waits) {
  rt.execute([&] {
    heddle::parallel_for(
        0, items, [&](int) { outer_item(s, isolated, nested_waits); }, 1);
  });
}

// The scenario made certain. Worker A holds the mutex and waits for its inner task P, which runs on
// worker B until an unrelated task U (submitted from outside) has started. U checks whether it runs
// on the thread that holds the mutex (where taking the mutex would deadlock) and releases P.
//  - With two workers and no isolation, only A can run U, and it does, inside its wait.
//  - Isolated, A never runs U; with three workers the third one runs it.
bool unrelated_task_ran_inside_the_wait(heddle::runtime& rt, bool isolated) {
  std::mutex m;
  std::atomic<std::thread::id> owner{};
  std::atomic<bool> p_started{false}, released{false}, inside{false};
  heddle::task_group outer(rt);
  outer.run([&] {
    std::lock_guard lock(m);
    owner.store(std::this_thread::get_id());
    auto region = [&] {
      heddle::task_group inner;
      inner.run([&] {
        p_started.store(true);
        while (!released.load()) std::this_thread::yield();
      });
      while (!p_started.load()) std::this_thread::yield();  // another worker took P
      inner.wait();
    };
    if (isolated) heddle::isolate(region);
    else region();
    owner.store(std::thread::id{});
  });
  while (!p_started.load()) std::this_thread::yield();
  auto u = rt.task([&] {
    released.store(true);
    if (owner.load() == std::this_thread::get_id()) {
      inside.store(true);  // taking the mutex here would deadlock
      return;
    }
    std::lock_guard lock(m);
  });
  outer.wait();
  u.get();
  return inside.load();
}

TEST(Isolate, WithoutItTheWaiterRunsTheUnrelatedTask) {
  watchdog dog("Isolate.WithoutItTheWaiterRunsTheUnrelatedTask", 60s);
  heddle::runtime rt(2);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(unrelated_task_ran_inside_the_wait(rt, /*isolated=*/false));
}

TEST(Isolate, TheWaiterNeverRunsTheUnrelatedTask) {
  watchdog dog("Isolate.TheWaiterNeverRunsTheUnrelatedTask", 120s);
  heddle::runtime rt(3);
  for (int i = 0; i < heddle_test::scaled(500, 100); ++i)
    ASSERT_FALSE(unrelated_task_ran_inside_the_wait(rt, /*isolated=*/true)) << "round " << i;
}

// With isolation: never an unrelated task inside the wait, on the mutex holder or on the workers
// running the region's tasks (whose own waits are isolated too); every item completes.
TEST(Isolate, TheWaiterRunsOnlyTasksOfItsRegion) {
  watchdog dog("Isolate.TheWaiterRunsOnlyTasksOfItsRegion", 300s);
  const int rounds = heddle_test::scaled(150, 25);
  for (unsigned n : {2u, 4u}) {
    heddle::runtime rt(n);
    for (int round = 0; round < rounds; ++round) {
      scenario s;
      run_scenario(rt, s, 24, /*isolated=*/true, /*nested_waits=*/round % 2 == 1);
      ASSERT_EQ(s.unrelated_inside.load(), 0) << n << " workers, round " << round;
      ASSERT_EQ(s.outer_done.load(), 24);
      const long per_item = 120 + (round % 2 == 1 ? 16 * 6 : 0);
      ASSERT_EQ(s.inner_sum.load(), 24 * per_item);
    }
  }
}

TEST(Isolate, ReturnsWhatFReturns) {
  EXPECT_EQ(heddle::isolate([] { return 5; }), 5);
  int x = 0;
  EXPECT_EQ(&heddle::isolate([&]() -> int& { return x; }), &x);
  heddle::runtime rt(1);
  EXPECT_EQ(rt.task([] { return heddle::isolate([] { return heddle::task([] { return 6; }).get(); }); }).get(), 6);
}

// On a single worker: a region's own tasks run inside its wait. After a region ends (by an
// exception too), the waiter takes tasks spawned outside it again: with one worker, a group
// spawned before the region could otherwise never finish.
TEST(Isolate, ExceptionsPropagateAndTheRegionEnds) {
  watchdog dog("Isolate.ExceptionsPropagateAndTheRegionEnds", 60s);
  heddle::runtime rt(1);
  const bool ok = rt.task([] {
                      std::atomic<int> outside_ran{0};
                      heddle::task_group before;
                      for (int i = 0; i < 10; ++i) before.run([&] { outside_ran++; });
                      bool threw = false;
                      try {
                        heddle::isolate([] {
                          heddle::task_group g;
                          g.run([] { throw std::runtime_error("inside"); });
                          g.wait();
                        });
                      } catch (const std::runtime_error&) {
                        threw = true;
                      }
                      long sum = 0;
                      heddle::isolate([&] {
                        std::atomic<long> s{0};
                        heddle::parallel_for(
                            0, 100, [&](int i) { s += i; }, 1);
                        sum = s.load();
                      });
                      before.wait();
                      return threw && sum == 4950 && outside_ran.load() == 10;
                    }).get();
  EXPECT_TRUE(ok);
}

// The region reaches a task that another worker stole, and that task's own wait. Four workers: W
// waits in region X for P; B stole P and waits inside it for R, which C runs until an unrelated task
// U (submitted from outside) has started. B, in P's wait, must never run U: D does.
thread_local bool in_p_wait = false;

TEST(Isolate, AStolenTasksWaitIsIsolatedToo) {
  watchdog dog("Isolate.AStolenTasksWaitIsIsolatedToo", 120s);
  heddle::runtime rt(4);
  for (int round = 0; round < heddle_test::scaled(300, 60); ++round) {
    std::atomic<bool> p_started{false}, r_started{false}, released{false}, u_in_p_wait{false};
    auto region = rt.task([&] {
      heddle::isolate([&] {
        heddle::task_group g;
        g.run([&] {  // P
          heddle::task_group h;
          h.run([&] {  // R
            r_started = true;
            while (!released.load()) std::this_thread::yield();
          });
          p_started = true;
          while (!r_started.load()) std::this_thread::yield();  // another worker took R
          in_p_wait = true;
          h.wait();
          in_p_wait = false;
        });
        while (!p_started.load()) std::this_thread::yield();  // another worker took P
        g.wait();
      });
    });
    while (!r_started.load()) std::this_thread::yield();
    auto u = rt.task([&] {
      if (in_p_wait) u_in_p_wait = true;
      released = true;
    });
    region.get();
    u.get();
    ASSERT_FALSE(u_in_p_wait.load()) << "round " << round;
  }
}

// One worker: a nested region returns without waiting for its task Q, which stays on the deque
// above the outer region's task A. The outer region's wait looks past Q, runs A, and leaves Q
// (another region's) to the scheduling loop; without looking past it, one worker would wait forever.
TEST(Isolate, ANestedRegionsLeftoverDoesNotHideTheRegionsTasks) {
  watchdog dog("Isolate.ANestedRegionsLeftoverDoesNotHideTheRegionsTasks", 60s);
  heddle::runtime rt(1);
  for (int round = 0; round < 100; ++round) {
    std::atomic<bool> q_ran{false};
    std::atomic<bool> q_ran_during_wait{false};
    // Out here: Q normally runs after the task below has returned, and reads it then.
    std::atomic<bool> waiting{false};
    heddle::future<void> q;
    rt.task([&] {
        heddle::isolate([&] {
          heddle::task_group g;
          g.run([&] {});  // A
          heddle::isolate([&] {
            q = heddle::task([&] {
              q_ran_during_wait = waiting.load();
              q_ran = true;
            });
          });
          waiting = true;
          g.wait();
          waiting = false;
        });
      }).get();
    q.get();
    EXPECT_TRUE(q_ran.load());
    EXPECT_FALSE(q_ran_during_wait.load());
  }
}

// The same leftover inside a parallel_reduce, on one worker: the reduce forks the upper half of its
// range, the lower half's leaf leaves a task Q of a nested region above the forked record, and the
// split, taking its half back, pops Q first. Q is not of the reduce's region: it must not run
// inside the reduce (forked::take_back runs what it pops as force() does); the reduce looks past
// it, runs its half, and leaves Q to the scheduling loop.
TEST(Isolate, AReduceTakingBackItsHalfLeavesANestedRegionsTask) {
  watchdog dog("Isolate.AReduceTakingBackItsHalfLeavesANestedRegionsTask", 60s);
  heddle::runtime rt(1);
  for (int round = 0; round < 100; ++round) {
    std::atomic<bool> reducing{false};
    std::atomic<bool> q_ran{false};
    std::atomic<bool> q_ran_during_reduce{false};
    heddle::future<void> q;
    const long sum = rt.task([&] {
                         return heddle::isolate([&] {
                           reducing = true;
                           const long s = heddle::parallel_reduce(
                               heddle::blocked_range<int>(0, 2, 1), 0L,
                               [&](const heddle::blocked_range<int>& r, long acc) {
                                 for (int i = r.begin(); i != r.end(); ++i) {
                                   if (i == 0)
                                     heddle::isolate([&] {
                                       q = heddle::task([&] {
                                         q_ran_during_reduce = reducing.load();
                                         q_ran = true;
                                       });
                                     });
                                   acc += i + 1;
                                 }
                                 return acc;
                               },
                               [](long a, long b) { return a + b; }, heddle::simple_partitioner{});
                           reducing = false;
                           return s;
                         });
                       }).get();
    q.get();
    EXPECT_EQ(sum, 3);
    EXPECT_TRUE(q_ran.load());
    EXPECT_FALSE(q_ran_during_reduce.load()) << "round " << round;
  }
}

// Every task runs in the region it was handed to the runtime in, whichever path runs it: a worker's
// scheduling loop (which enters a task's region and leaves it when the task returns, so that the next
// task, of no region, runs in none), a waiter helping, a force() running a child inline. Outside
// threads submit tasks alternately inside and outside isolate(); each task spawns a child, forces
// it, and both read the worker's region (a detail, read directly here).
TEST(Isolate, EveryTaskRunsInItsOwnRegion) {
  watchdog dog("Isolate.EveryTaskRunsInItsOwnRegion", 300s);
  const int per_thread = heddle_test::scaled(4000, 500);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime rt(n);
    std::atomic<int> wrong{0};
    std::atomic<long> ran{0};
    auto submit = [&] {
      heddle::task_group g(rt);
      for (int i = 0; i < per_thread; ++i) {
        auto one = [&] {
          const std::uint32_t region = heddle::core_detail::current_isolation();
          g.run([&, region] {
            if (heddle::core_detail::current_isolation() != region) wrong++;
            auto child = heddle::task([&, region] {
              if (heddle::core_detail::current_isolation() != region) wrong++;
              ran++;
            });
            child.get();
            if (heddle::core_detail::current_isolation() != region) wrong++;
            ran++;
          });
        };
        if (i % 2 == 0) heddle::isolate(one);
        else one();
      }
      g.wait();
    };
    std::thread a(submit), b(submit);
    a.join();
    b.join();
    EXPECT_EQ(wrong.load(), 0) << n << " workers";
    EXPECT_EQ(ran.load(), 2L * 2 * per_thread) << n << " workers";
  }
}

// Nested regions: the inner region's waits take only inner tasks, the outer region's only outer
// ones. Tasks carry the region they were spawned in (a number here); a task that starts on a
// thread waiting in another region is counted.
thread_local int waiting_in = 0;

TEST(Isolate, NestedRegions) {
  watchdog dog("Isolate.NestedRegions", 300s);
  const int rounds = heddle_test::scaled(100, 20);
  for (unsigned n : {1u, 2u, 4u}) {
    heddle::runtime rt(n);
    std::atomic<int> wrong{0};
    std::atomic<long> sum{0};
    auto task_of = [&](int region, int value) {
      return [&, region, value] {
        if (waiting_in != 0 && waiting_in != region) wrong++;
        spin_for(std::chrono::microseconds(5));
        sum += value;
      };
    };
    for (int round = 0; round < rounds; ++round) {
      rt.execute([&] {
        heddle::task_group unrelated;  // spawned outside both regions, waited for last
        for (int i = 0; i < 8; ++i) unrelated.run(task_of(3, 1));
        heddle::isolate([&] {
          heddle::task_group outer;
          for (int i = 0; i < 8; ++i) outer.run(task_of(1, 10));
          heddle::isolate([&] {
            heddle::task_group inner;
            for (int i = 0; i < 8; ++i) inner.run(task_of(2, 100));
            const int saved = waiting_in;
            waiting_in = 2;
            inner.wait();
            waiting_in = saved;
          });
          const int saved = waiting_in;
          waiting_in = 1;
          outer.wait();
          waiting_in = saved;
        });
        unrelated.wait();
      });
      // The same from inside a task (the waits then help on a worker).
      rt.task([&] {
          heddle::task_group unrelated;
          for (int i = 0; i < 8; ++i) unrelated.run(task_of(3, 1));
          heddle::isolate([&] {
            heddle::task_group outer;
            for (int i = 0; i < 8; ++i) outer.run(task_of(1, 10));
            heddle::isolate([&] {
              heddle::task_group inner;
              for (int i = 0; i < 8; ++i) inner.run(task_of(2, 100));
              waiting_in = 2;
              inner.wait();
              waiting_in = 1;
            });
            outer.wait();
            waiting_in = 0;
          });
          unrelated.wait();
        }).get();
    }
    EXPECT_EQ(wrong.load(), 0) << n << " workers";
    EXPECT_EQ(sum.load(), 2L * rounds * 8 * 111);
  }
}

// A region entered on a thread outside the runtime tags what it spawns: the workers that run those
// tasks wait isolated inside them, while an unrelated thread keeps injecting tasks.
TEST(Isolate, RegionEnteredOutsideTheRuntime) {
  watchdog dog("Isolate.RegionEnteredOutsideTheRuntime", 300s);
  const int rounds = heddle_test::scaled(100, 20);
  for (unsigned n : {2u, 4u}) {
    heddle::runtime rt(n);
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0};
    std::atomic<long> unrelated_ran{0};
    std::thread noise([&] {
      heddle::task_group g(rt);
      while (!stop.load()) {
        for (int i = 0; i < 16; ++i)
          g.run([&] {
            if (inside_region > 0) wrong++;
            unrelated_ran++;
          });
        g.wait();
      }
    });
    std::atomic<long> sum{0};
    for (int round = 0; round < rounds; ++round) {
      rt.execute([&] {
        heddle::isolate([&] {
          heddle::parallel_for(
              0, 16,
              [&](int i) {
                ++inside_region;
                heddle::parallel_for(
                    0, 8,
                    [&](int j) {
                      spin_for(std::chrono::microseconds(10));
                      sum += i * j;
                    },
                    1);
                --inside_region;
              },
              1);
        });
      });
    }
    stop = true;
    noise.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(sum.load(), static_cast<long>(rounds) * 120 * 28);
    EXPECT_GT(unrelated_ran.load(), 0);
  }
}

// The requeue path, made certain with three workers. W waits in region X for P, which runs on V; P
// leaves a task Q of a nested region on V's deque. C is kept busy, so that the only one to find Q is
// W, looking for work of X on V (which runs in X): W steals Q, sees it is not of X, and requeues it;
// C, released by the requeue, then runs it from the injection queue, which lets P and W finish.
// A requeue counts as an injection.
TEST(Isolate, AStolenTaskOfAnotherRegionIsRequeued) {
  watchdog dog("Isolate.AStolenTaskOfAnotherRegionIsRequeued", 120s);
  for (int round = 0; round < heddle_test::scaled(20, 5); ++round) {
    heddle::runtime rt(3);
    std::atomic<bool> blocker_running{false}, p_started{false}, q_ran{false}, q_on_w{false};
    std::atomic<std::thread::id> w_thread{};
    auto blocker = rt.task([&] {
      blocker_running = true;
      while (rt.stats().isolation_requeues == 0) std::this_thread::yield();
    });
    while (!blocker_running.load()) std::this_thread::yield();
    auto region = rt.task([&] {
      w_thread = std::this_thread::get_id();
      heddle::isolate([&] {
        heddle::task_group g;
        g.run([&] {  // P
          heddle::isolate([&] {
            (void)heddle::task([&] {  // Q
              q_on_w = std::this_thread::get_id() == w_thread.load();
              q_ran = true;
            });
          });
          p_started = true;
          while (!q_ran.load()) std::this_thread::yield();
        });
        while (!p_started.load()) std::this_thread::yield();
        g.wait();
      });
    });
    region.get();
    blocker.get();
    EXPECT_TRUE(q_ran.load());
    EXPECT_FALSE(q_on_w.load());
    const heddle::runtime_stats st = rt.stats();
    EXPECT_GE(st.isolation_requeues, 1u);
    // The blocker and the region, submitted from here, and every requeue: all through the
    // injection queue (Q and P were spawned by workers).
    EXPECT_EQ(st.injected, 2 + st.isolation_requeues);
  }
}

// Most steals by an isolated waiter find a task of its region: requeues stay few.
TEST(Isolate, RequeuesAreRare) {
  watchdog dog("Isolate.RequeuesAreRare", 300s);
  heddle::runtime rt(4);
  scenario s;
  const auto before = rt.stats();
  for (int round = 0; round < heddle_test::scaled(50, 10); ++round)
    run_scenario(rt, s, 24, /*isolated=*/true, /*nested_waits=*/true);
  const auto after = rt.stats();
  EXPECT_EQ(s.unrelated_inside.load(), 0);
  const auto requeues = after.isolation_requeues - before.isolation_requeues;
  const auto executed = after.executed - before.executed;
  std::printf("isolation requeues: %llu of %llu tasks executed\n", static_cast<unsigned long long>(requeues),
              static_cast<unsigned long long>(executed));
  EXPECT_LT(requeues * 10, executed);
}

}  // namespace
