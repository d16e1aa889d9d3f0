// An idle runtime uses no CPU: after its workers settle, the process's CPU time over one second
// stays under 50 ms. The one timed assertion of the core suite.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <heddle/heddle.hpp>
#include <string>
#include <thread>
#include <vector>

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

}  // namespace
