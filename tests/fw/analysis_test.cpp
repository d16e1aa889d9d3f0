// SPDX-License-Identifier: Apache-2.0
// The dependency bound: work and critical path per event, by the framework's own rules.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>

#include "fw_test_support.hpp"
#include "study/study.hpp"

namespace analysis_test {
namespace {

using namespace heddle::fw;
using namespace heddle::fw::study;  // the timing modules the configurations use

process_config config(const std::string& producers, const std::string& filters, const std::string& paths) {
  return parse_config(
      R"({"process":{"options":{"nSimultaneousEvents":1,"busyWaitScaleFactor":1},"source":{"iterations":4},"producers":[)" +
          producers + R"(],"filters":[)" + filters + R"(],"paths":)" + paths + "}}",
      "t.json");
}

TEST(DependencyBound, WorkAndCriticalPathOfADiamond) {
  const process_config c = config(
      R"({"@label":"a","@type":"BusyWaitProducer","averageTime":1},
         {"@label":"b","@type":"BusyWaitProducer","averageTime":2,"toGet":[{"label":"a","product":""}]},
         {"@label":"c","@type":"BusyWaitProducer","averageTime":3},
         {"@label":"unused","@type":"BusyWaitProducer","averageTime":50})",
      R"({"@label":"f","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"b","product":""},{"label":"c","product":""}]})",
      R"({"p":["f"]})");
  const dependency_bound b = analyse_dependencies(c, 1, 4);
  ASSERT_EQ(b.events.size(), 4u);
  for (const event_cost& e : b.events) {
    EXPECT_DOUBLE_EQ(e.work_s, 7);           // a + b + c + f; "unused" never runs
    EXPECT_DOUBLE_EQ(e.critical_path_s, 4);  // max(a + b, c) + f
  }
  EXPECT_DOUBLE_EQ(b.speedup(1, 1), 1);
  EXPECT_DOUBLE_EQ(b.speedup(2, 1), 7.0 / 4);
  EXPECT_DOUBLE_EQ(b.speedup(2, 2), 2);
  EXPECT_DOUBLE_EQ(b.speedup(100, 1), 7.0 / 4);
  EXPECT_DOUBLE_EQ(b.speedup(100, 100), 4 * 7.0 / 4);  // four events at once, each its critical path
  // The time scale scales both.
  const dependency_bound s = analyse_dependencies(c, 1e-3, 4);
  EXPECT_NEAR(s.work_s(), 4 * 7e-3, 1e-12);
  EXPECT_NEAR(s.speedup(2, 1), 7.0 / 4, 1e-9);
}

// From a recorded timeline: the same diamond, its modules' times given per event as the
// processors record them (a module with two executions in one event counts both).
TEST(DependencyBound, FromARecordedTimeline) {
  const process_config c = config(
      R"({"@label":"a","@type":"BusyWaitProducer","averageTime":1},
         {"@label":"b","@type":"BusyWaitProducer","averageTime":2,"toGet":[{"label":"a","product":""}]},
         {"@label":"c","@type":"BusyWaitProducer","averageTime":3})",
      R"({"@label":"f","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"b","product":""},{"label":"c","product":""}]})",
      R"({"p":["f"]})");
  process p = make_process(c);
  p.finalize();
  // Declaration order: producers a, b, c, then filter f. Event 1: c takes 5 s, in two executions.
  constexpr std::int64_t s = 1'000'000'000;
  timeline t;
  for (std::uint64_t e = 0; e < 2; ++e) {
    t.record({0, e, 0, 1 * s});
    t.record({1, e, 1 * s, 3 * s});
    t.record({3, e, 10 * s, 11 * s});
  }
  t.record({2, 0, 0, 3 * s});
  t.record({2, 1, 0, 2 * s});
  t.record({2, 1, 4 * s, 7 * s});
  const dependency_bound b = analyse_dependencies(p, t, 3);
  ASSERT_EQ(b.events.size(), 3u);
  EXPECT_DOUBLE_EQ(b.events[0].work_s, 7);
  EXPECT_DOUBLE_EQ(b.events[0].critical_path_s, 4);
  EXPECT_DOUBLE_EQ(b.events[1].work_s, 9);
  EXPECT_DOUBLE_EQ(b.events[1].critical_path_s, 6);  // c (5 s), then f
  EXPECT_DOUBLE_EQ(b.events[2].work_s, 0);           // not recorded: nothing ran
  process unfinalized = make_process(c);
  EXPECT_THROW((void)analyse_dependencies(unfinalized, t, 1), std::logic_error);
}

// The generic form: any process, its modules' times and filters' decisions given per event.
TEST(DependencyBound, FromGivenCosts) {
  const process_config c = config(
      R"({"@label":"a","@type":"BusyWaitProducer","averageTime":1},
         {"@label":"d","@type":"BusyWaitProducer","averageTime":1})",
      R"({"@label":"f1","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"a","product":""}]},
         {"@label":"f2","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"d","product":""}]})",
      R"({"p":["f1","f2"]})");
  process p = make_process(c);
  p.finalize();
  // Declaration order: a, d, f1, f2; module m takes m + 1 seconds in event 0, twice that in event 1;
  // f1 rejects event 1, so neither d nor f2 runs then.
  const module_costs costs{[](std::uint32_t m, std::uint64_t e) { return double(m + 1) * double(e + 1); },
                           [](std::uint32_t f, std::uint64_t e) { return !(f == 2 && e == 1); }};
  const dependency_bound b = analyse_dependencies(p, costs, 2);
  ASSERT_EQ(b.events.size(), 2u);
  EXPECT_DOUBLE_EQ(b.events[0].work_s, 1 + 2 + 3 + 4);
  EXPECT_DOUBLE_EQ(b.events[0].critical_path_s, 1 + 3 + 2 + 4);  // a, f1, then d, f2
  EXPECT_DOUBLE_EQ(b.events[1].work_s, 2 + 6);
  EXPECT_DOUBLE_EQ(b.events[1].critical_path_s, 2 + 6);
  process unfinalized = make_process(c);
  EXPECT_THROW((void)analyse_dependencies(unfinalized, costs, 1), std::logic_error);
}

TEST(DependencyBound, PathsRunInOrderAndRejectionStopsThem) {
  // f2's producer d is asked for only when the path reaches f2, after f1.
  const std::string producers = R"({"@label":"d","@type":"BusyWaitProducer","averageTime":2})";
  const std::string paths = R"({"p":["f1","f2"]})";
  const process_config passing = config(producers,
                                        R"({"@label":"f1","@type":"BusyWaitPassFilter","averageTime":1},
                                           {"@label":"f2","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"d","product":""}]})",
                                        paths);
  const dependency_bound b = analyse_dependencies(passing, 1, 1);
  EXPECT_DOUBLE_EQ(b.events[0].work_s, 4);
  EXPECT_DOUBLE_EQ(b.events[0].critical_path_s, 4);  // f1, then d, then f2
  // Rejecting every other event: then f2 and d do not run.
  const process_config rejecting =
      config(producers,
             R"({"@label":"f1","@type":"BusyWaitPassFilter","averageTime":1,"pass":[false,true]},
                                             {"@label":"f2","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"d","product":""}]})",
             paths);
  const dependency_bound r = analyse_dependencies(rejecting, 1, 2);
  EXPECT_DOUBLE_EQ(r.events[0].work_s, 1);
  EXPECT_DOUBLE_EQ(r.events[0].critical_path_s, 1);
  EXPECT_DOUBLE_EQ(r.events[1].work_s, 4);
}

// The bound and both processors follow one rule for paths (src/fw/path_rule.hpp): per event, the
// bound's work is the sum of the times of exactly the modules the processors ran. Each module's
// time is its own power of two, so the sum names the set. Filters reject by patterns of different
// lengths, two paths hold the same filters in opposite orders, an output module selects a path.
TEST(DependencyBound, CountsTheModulesTheProcessorsRun) {
  const process_config c = parse_config(R"({"process":{"options":{"nSimultaneousEvents":4,"busyWaitScaleFactor":1},
    "source":{"iterations":12},
    "producers":[{"@label":"a","@type":"BusyWaitProducer","averageTime":1},
                 {"@label":"b","@type":"BusyWaitProducer","averageTime":2,"toGet":[{"label":"a","product":""}]},
                 {"@label":"c","@type":"BusyWaitProducer","averageTime":4},
                 {"@label":"d","@type":"BusyWaitProducer","averageTime":8,"toGet":[{"label":"c","product":""}]},
                 {"@label":"e","@type":"BusyWaitProducer","averageTime":16}],
    "filters":[{"@label":"f1","@type":"BusyWaitPassFilter","averageTime":32,"pass":[true,false,true],"toGet":[{"label":"b","product":""}]},
               {"@label":"f2","@type":"BusyWaitPassFilter","averageTime":64,"pass":[true,true,false,false],"toGet":[{"label":"d","product":""}]},
               {"@label":"f3","@type":"BusyWaitPassFilter","averageTime":128,"pass":[false,true],"toGet":[{"label":"e","product":""}]}],
    "outputs":[{"@label":"o1","@type":"BusyWaitOutputModule","averageTime":256,"selectEvents":["p3"],"toGet":[{"label":"a","product":""}]},
               {"@label":"o2","@type":"BusyWaitOutputModule","averageTime":512,"toGet":[{"label":"c","product":""}]}],
    "paths":{"p1":["f1","f2"],"p2":["f2","f1"],"p3":["f3"]},"endPaths":{"e":["o1","o2"]}}})",
                                        "t.json");
  const dependency_bound bound = analyse_dependencies(c, 1, c.events);
  ASSERT_EQ(bound.events.size(), c.events);
  // What ran, per event, in the bound's units: the modules' times unscaled.
  std::vector<double> average;  // each module's time
  for (const module_config& m : c.modules) average.push_back(settings_of(c, m).average_time);
  auto work_of = [&](const timeline& t) {
    std::vector<double> work(c.events);
    for (const timeline_entry& x : t.entries()) work[x.event] += average[x.module];
    return work;
  };
  for (const bool threaded : {false, true}) {
    process p = make_process(study::with_timing(c, {wait_mode::busy, 1e-9, 1}));  // no time spent
    timeline t;
    run_options o = fw_test::options(c.events, threaded ? 4 : 1);
    o.record = &t;
    threaded ? run_threaded(p, o) : run_single_threaded(p, o);
    const std::vector<double> ran = work_of(t);
    for (std::uint64_t e = 0; e < c.events; ++e)
      EXPECT_EQ(bound.events[e].work_s, ran[e]) << (threaded ? "threaded" : "single-threaded") << ", event " << e;
  }
  // The decisions matter: not every event runs the same modules.
  EXPECT_NE(bound.events[0].work_s, bound.events[1].work_s);
}

TEST(DependencyBound, TheHighPileupConfiguration) {
  FW_TEST_NEEDS_CMS(fw_test::hipileup);
  const dependency_bound b = analyse_dependencies(load_config(fw_test::cms(fw_test::hipileup)), 1, 100);
  // ~24 s of work and an ~18 s critical path per event: at most 1.3x with one event in flight.
  EXPECT_NEAR(b.work_s() / 100, 23.9, 0.2);
  EXPECT_NEAR(b.critical_path_s() / 100, 18.4, 0.2);
  EXPECT_NEAR(b.speedup(2, 1), 1.297, 0.005);
  EXPECT_DOUBLE_EQ(b.speedup(2, 2), 2);
}

}  // namespace

}  // namespace analysis_test
