// SPDX-License-Identifier: Apache-2.0
// An idle runtime uses no CPU: after its workers settle, the process's CPU time over one second
// stays under 50 ms; so do workers and outside threads waiting on work that sleeps elsewhere.
// The only timed assertions of the core suite.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;

std::chrono::nanoseconds process_cpu_time() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// CPU time the whole process uses during one second of wall time in which nobody submits work.
double idle_cpu_ms_over_one_second() {
  std::this_thread::sleep_for(300ms);  // let the workers spin out, park and back off
  const auto c0 = process_cpu_time();
  const auto w0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(1s);
  const auto c1 = process_cpu_time();
  const auto w1 = std::chrono::steady_clock::now();
  const double cpu_ms = std::chrono::duration<double, std::milli>(c1 - c0).count();
  std::printf("[ info     ] %.2f ms of CPU over %.0f ms of wall time\n", cpu_ms,
              std::chrono::duration<double, std::milli>(w1 - w0).count());
  return cpu_ms;
}

// Work that wakes every worker, spawns, steals and waits, so the idle phase starts from a busy runtime.
void make_busy(heddle::runtime& rt) {
  auto f = rt.task(heddle_test::task_fib, 22);
  ASSERT_EQ(*f, heddle_test::serial_fib(22));
  heddle::task_group g(rt);
  for (int i = 0; i < 100; ++i) g.run([] { heddle_test::spin_work(1000); });
  g.wait();
}

constexpr double limit_ms = 50.0;

TEST(Idle, FreshRuntimeUsesNoCpu) {
  heddle::runtime rt(2);
  EXPECT_LT(idle_cpu_ms_over_one_second(), limit_ms);
}

TEST(Idle, RuntimeAfterWorkUsesNoCpu) {
  heddle::runtime rt(2);
  make_busy(rt);
  EXPECT_LT(idle_cpu_ms_over_one_second(), limit_ms);
}

TEST(Idle, OversubscribedRuntimeAfterWorkUsesNoCpu) {
  heddle::runtime rt(8);  // more workers than cores
  make_busy(rt);
  EXPECT_LT(idle_cpu_ms_over_one_second(), limit_ms);
}

TEST(Idle, DefaultRuntimeAfterForeignFuturesUsesNoCpu) {
  std::vector<heddle::future<long>> fs;
  for (int i = 0; i < 100; ++i) fs.push_back(heddle::task(heddle_test::task_fib, 15));
  for (auto& f : fs) ASSERT_EQ(*f, heddle_test::serial_fib(15));
  EXPECT_LT(idle_cpu_ms_over_one_second(), limit_ms);
}

// Waiting is not spinning: while the awaited work sleeps elsewhere, the waiters use no CPU.

TEST(Idle, WorkerWaitingOnASlowFutureUsesNoCpu) {
  heddle_test::watchdog dog("Idle.WorkerWaitingOnASlowFutureUsesNoCpu", 60s);
  heddle::runtime a(2), b(2);
  // b's tasks sleep through the measurement; both of a's workers wait on it, one through a
  // future and one through a task group.
  auto slow = b.task([] {
    std::this_thread::sleep_for(1600ms);
    return 5;
  });
  auto waiter = a.task([&slow] { return *slow; });
  auto group_waiter = a.task([&b] {
    heddle::task_group g(b);
    g.run([] { std::this_thread::sleep_for(1600ms); });
    return g.wait();
  });
  EXPECT_LT(idle_cpu_ms_over_one_second(), limit_ms);
  EXPECT_EQ(*waiter, 5);
  EXPECT_EQ(*group_waiter, heddle::task_group_status::complete);
}

TEST(Idle, ForeignThreadsBlockedOnFuturesUseNoCpu) {
  heddle_test::watchdog dog("Idle.ForeignThreadsBlockedOnFuturesUseNoCpu", 60s);
  heddle::runtime rt(2);
  auto slow = rt.task([] {
    std::this_thread::sleep_for(1600ms);
    return 6;
  });
  heddle::task_group g(rt);
  g.run([] { std::this_thread::sleep_for(1600ms); });
  int got = 0;
  heddle::task_group_status status{};
  std::thread forcer([&] { got = *slow; });
  std::thread group_waiter([&] { status = g.wait(); });
  EXPECT_LT(idle_cpu_ms_over_one_second(), limit_ms);
  forcer.join();
  group_waiter.join();
  EXPECT_EQ(got, 6);
  EXPECT_EQ(status, heddle::task_group_status::complete);
}

}  // namespace
