// SPDX-License-Identifier: Apache-2.0
// The trace of the async layer: each operation a span from its start to its completion on the
// operation lanes of the thread that completed it, and a flow from each completion to the start of
// its successor, tagged with the successor's strategy. Traces of known programs counted exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <heddle/core/trace.hpp>
#include <heddle/heddle.hpp>
#include <map>
#include <string>
#include <vector>

#include "async_test_support.hpp"
#include "trace_reader.hpp"

namespace {

using namespace std::chrono_literals;
using heddle::strategy;
using heddle_test::trace_file;

// Every strategy's successors of timers: one "timer" operation per timer, on the timer engine's
// lanes, one flow per successor with its strategy, each ending inside the task span that ran it.
TEST(AsyncTrace, TimersAndTheirSuccessorsFlowsExactly) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("timers.json");
  heddle::runtime rt({.threads = 2});
  constexpr int per_strategy = 25;
  const std::array<strategy, 4> strategies{strategy::normal, strategy::express, strategy::short_task, strategy::asap};
  heddle::trace::start(path);
  // The trace's times are steady-clock times: every timer ends at or after its deadline, which is at
  // least its duration after this.
  const std::int64_t before =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rt.execute([&] {
    std::vector<heddle::future<int>> done;
    for (strategy s : strategies)
      for (int i = 0; i < per_strategy; ++i)
        done.push_back(heddle::sleep_for(std::chrono::microseconds(100 + 37 * i)).then(s, [i] { return i; }));
    int sum = 0;
    for (auto& f : done) sum += *f;
    EXPECT_EQ(sum, 4 * per_strategy * (per_strategy - 1) / 2);
  });
  heddle::trace::stop();
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  const auto timers = t.select("X", "async", "timer");
  ASSERT_EQ(timers.size(), 4u * per_strategy);
  std::vector<std::int64_t> ends, deadlines;  // sorted: the k-th end is at or after the k-th deadline
  for (auto& e : timers) {
    const std::string lane = t.thread_of(e);
    EXPECT_EQ(lane.rfind("timer engine operations", 0), 0u) << lane;
    ends.push_back(heddle_test::trace_ns(e.at("ts")) + heddle_test::trace_ns(e.at("dur")));
  }
  for (std::size_t s = 0; s < strategies.size(); ++s)
    for (int i = 0; i < per_strategy; ++i) deadlines.push_back(before + 1000 * (100 + 37 * i));
  std::sort(ends.begin(), ends.end());
  std::sort(deadlines.begin(), deadlines.end());
  for (std::size_t k = 0; k < ends.size(); ++k)
    EXPECT_GE(ends[k], deadlines[k]) << "timer " << k << " by end ended before the earliest deadline it can have";
  std::map<std::string, int> begun, ended;
  for (auto& e : t.select("s", "flow", "successor")) ++begun[e.at("args").at("strategy")];
  for (auto& e : t.select("f", "flow", "successor")) {
    ++ended[e.at("args").at("strategy")];
    EXPECT_EQ(e.at("bp"), "e");
  }
  for (const char* s : {"normal", "express", "short_task", "asap"}) {
    EXPECT_EQ(begun[s], per_strategy) << s;
    EXPECT_EQ(ended[s], per_strategy) << s;
  }
  // A flow ends where its successor ran: inside a task span on that thread.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> tasks;
  for (auto& e : t.select("X", "task")) {
    const std::int64_t ts = heddle_test::trace_ns(e.at("ts"));
    tasks[{e.at("pid"), e.at("tid")}].push_back({ts, ts + heddle_test::trace_ns(e.at("dur"))});
  }
  for (auto& e : t.select("f", "flow", "successor")) {
    const std::int64_t ts = heddle_test::trace_ns(e.at("ts"));
    bool inside = false;
    for (auto [a, b] : tasks[{e.at("pid"), e.at("tid")}]) inside = inside || (a <= ts && ts <= b);
    EXPECT_TRUE(inside) << "a successor's flow ends outside any task span: " << e.dump();
  }
  std::filesystem::remove(path);
}

// Reads and writes on a pipe: one "read" and one "write" operation each, flows to their successors.
TEST(AsyncTrace, StreamOperationsAreSpans) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("pipe.json");
  heddle::runtime rt({.threads = 2});
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  constexpr int rounds = 20;
  heddle::trace::start(path);
  rt.execute([&] {
    for (int i = 0; i < rounds; ++i) {
      std::array<std::byte, 8> in{}, out{};
      out[0] = std::byte(i);
      auto r = heddle::io::read(p[0], in);  // waits in the fd engine until the write
      auto w = heddle::io::write(p[1], out);
      EXPECT_EQ(*w, 8u);
      EXPECT_EQ(*r, 8u);
      EXPECT_EQ(in[0], std::byte(i));
    }
  });
  heddle::trace::stop();
  ::close(p[0]);
  ::close(p[1]);
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  EXPECT_EQ(t.count("X", "async", "read"), static_cast<std::size_t>(rounds));
  EXPECT_EQ(t.count("X", "async", "write"), static_cast<std::size_t>(rounds));
  std::filesystem::remove(path);
}

}  // namespace
