// SPDX-License-Identifier: Apache-2.0
// The threaded processor's stop-and-error controller (src/fw/stop_control.hpp) on its own: the
// first error wins, also among threads failing at once; any error stops the job; the error is
// handed over once. (How a stopped job drains is tested on whole processes: semantics_test.cpp,
// lumi_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "stop_control.hpp"

namespace stop_control_test {
namespace {

namespace fw = heddle::fw;

TEST(StopControl, RunsUntilAnErrorAndThenKeepsTheFirst) {
  fw_detail::stop_control stop;
  EXPECT_FALSE(stop.stopping());
  EXPECT_FALSE(stop.failed());
  stop.fail(fw::module_error("first", 3, 1, "boom"));
  EXPECT_TRUE(stop.stopping());
  EXPECT_TRUE(stop.failed());
  stop.fail(fw::module_error("second", 4, 1, "later"));
  const auto error = stop.take_error();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->label(), "first");
  EXPECT_EQ(error->event(), 3u);
  EXPECT_STREQ(error->what(), "module 'first' failed on event 3 (run 1): boom");
  EXPECT_FALSE(stop.take_error().has_value());  // handed over once
  EXPECT_TRUE(stop.stopping());                 // the job still stops
}

TEST(StopControl, NoErrorNoReport) {
  fw_detail::stop_control stop;
  EXPECT_FALSE(stop.take_error().has_value());
  EXPECT_FALSE(stop.stopping());
}

TEST(StopControl, AmongThreadsFailingAtOnceExactlyOneErrorIsTheJobs) {
  fw_detail::stop_control stop;
  constexpr int threads = 8;
  std::vector<std::thread> failing;
  for (int t = 0; t < threads; ++t)
    failing.emplace_back([&stop, t] {
      std::string label = "m";  // appended to: GCC 12 warns falsely on "m" + std::string (-Wstringop-overflow)
      label += std::to_string(t);
      for (int k = 0; k < 100; ++k) stop.fail(fw::module_error(label, static_cast<std::uint64_t>(k), 1, "x"));
    });
  for (std::thread& t : failing) t.join();
  const auto error = stop.take_error();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->event(), 0u);  // each thread's first failure is event 0: whichever came first, it was a first
  EXPECT_EQ(error->label().substr(0, 1), "m");
  EXPECT_TRUE(stop.stopping());
}

}  // namespace
}  // namespace stop_control_test
