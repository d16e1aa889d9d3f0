// The dependency bound: work and critical path per event, by the framework's own rules.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;

process_config config(const std::string& producers, const std::string& filters, const std::string& paths) {
  return parse_config(R"({"process":{"options":{"nSimultaneousEvents":1,"busyWaitScaleFactor":1},"source":{"iterations":4},"producers":[)" +
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
  const process_config rejecting = config(producers,
                                          R"({"@label":"f1","@type":"BusyWaitPassFilter","averageTime":1,"pass":[false,true]},
                                             {"@label":"f2","@type":"BusyWaitPassFilter","averageTime":1,"toGet":[{"label":"d","product":""}]})",
                                          paths);
  const dependency_bound r = analyse_dependencies(rejecting, 1, 2);
  EXPECT_DOUBLE_EQ(r.events[0].work_s, 1);
  EXPECT_DOUBLE_EQ(r.events[0].critical_path_s, 1);
  EXPECT_DOUBLE_EQ(r.events[1].work_s, 4);
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
