// SPDX-License-Identifier: Apache-2.0
// The framework in traces (CMS's StallMonitor view): per module and event its method (and acquire),
// its prefetch and stall; each event on its stream's track; the transitions. Counted exactly against
// the run's own timeline of module executions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <heddle/core/trace.hpp>
#include <heddle/fw.hpp>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "fw_test_support.hpp"
#include "study/study.hpp"
#include "trace_reader.hpp"

namespace {

using namespace heddle::fw;
using namespace heddle::fw::study;  // the timing modules the configurations use
using heddle_test::trace_file;

struct traced_run {
  timeline executions;
  std::vector<std::string> labels;  // by module index
};

// Runs `config` threaded (2 workers, 4 events in flight, 10 events a lumi) while tracing into `path`;
// its module executions and labels into `r`.
void run_traced(const std::string& config, std::uint64_t events, const std::string& path, traced_run& r) {
  process p = make_process(study::with_timing(load_config(config), {wait_mode::as_configured, 1e-3, 0}));
  for (std::size_t i = 0; i < p.num_modules(); ++i) r.labels.push_back(p.spec(i).label);
  run_options o = fw_test::options(events, 4, 2);
  o.events_per_lumi = 10;
  o.record = &r.executions;
  heddle::trace::start(path);
  const run_report report = run_threaded(p, o);
  heddle::trace::stop();
  EXPECT_EQ(report.events, events);
}

TEST(FwTrace, EveryModuleExecutionEventAndTransitionIsInTheTrace) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("chain.json");
  constexpr std::uint64_t events = 40;
  traced_run r;
  run_traced(fw_test::own("chain.json"), events, path, r);
  trace_file t(path);
  heddle_test::expect_well_formed(t);

  std::map<std::string, std::size_t> expected, produced, stalls;
  for (const timeline_entry& e : r.executions.entries()) ++expected[r.labels.at(e.module)];
  for (auto& e : t.select("X", "module")) {
    EXPECT_EQ(e.at("args").at("phase"), "produce") << "chain.json has no ExternalWork module";
    EXPECT_LT(e.at("args").at("event").get<std::uint64_t>(), events + 1);
    ++produced[e.at("name")];
  }
  EXPECT_EQ(produced, expected);
  for (auto& e : t.select("X", "module.stall")) ++stalls[e.at("name")];
  EXPECT_EQ(stalls, expected) << "every execution was ready once, and may have waited";
  // A prefetch per execution that had inputs to wait for; none longer than the run.
  EXPECT_GT(t.count("X", "module.prefetch"), 0u);
  EXPECT_LE(t.count("X", "module.prefetch"), t.count("X", "module"));

  // Each event once, on the track of a stream below the events in flight.
  const auto evs = t.select("X", "event");
  EXPECT_EQ(evs.size(), events);
  std::set<std::uint64_t> numbers;
  for (auto& e : evs) {
    numbers.insert(e.at("args").at("event").get<std::uint64_t>());
    const std::string track = t.thread_of(e);
    std::smatch m;
    ASSERT_TRUE(std::regex_match(track, m, std::regex("stream (\\d+)"))) << track;
    EXPECT_LT(std::stoi(m[1]), 4);
    EXPECT_EQ(e.at("args").at("stream").get<int>(), std::stoi(m[1]));
    EXPECT_EQ(e.at("name"), "event " + std::to_string(e.at("args").at("run").get<int>()) + ":" +
                                std::to_string(e.at("args").at("lumi").get<int>()) + ":" +
                                std::to_string(e.at("args").at("event").get<std::uint64_t>()));
  }
  EXPECT_EQ(numbers.size(), events);
  // One job, one run, four lumis of ten events.
  EXPECT_EQ(t.count("X", "fw", "begin job"), 1u);
  EXPECT_EQ(t.count("X", "fw", "end job"), 1u);
  EXPECT_EQ(t.count("X", "fw", "begin run"), 1u);
  EXPECT_EQ(t.count("X", "fw", "end run"), 1u);
  EXPECT_EQ(t.count("X", "fw", "begin lumi"), 4u);
  EXPECT_EQ(t.count("X", "fw", "end lumi"), 4u);
  std::filesystem::remove(path);
}

TEST(FwTrace, ExternalWorkRecordsAcquireAndProduce) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("acquire.json");
  constexpr std::uint64_t events = 20;
  traced_run r;
  run_traced(fw_test::own("chain_acquire.json"), events, path, r);
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  std::map<std::string, std::size_t> acquires;
  for (auto& e : t.select("X", "module"))
    if (e.at("args").at("phase") == "acquire") ++acquires[e.at("name")];
  // hits, tracks and clusters acquire once per event (every path asks for them).
  EXPECT_EQ(acquires, (std::map<std::string, std::size_t>{{"clusters", events}, {"hits", events}, {"tracks", events}}));
  std::filesystem::remove(path);
}

}  // namespace
