// The processors on the study's configurations and the project's own: the multi-threaded one gives
// the single-threaded reference's checksum for every number of threads, events in flight and way of
// waiting.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>

#include "fw_test_support.hpp"

namespace processor_test {
namespace {

using namespace heddle::fw;
using fw_test::cms;

struct outcome {
  std::uint64_t checksum;
  std::uint64_t events;
};

outcome run(const std::string& file, bool single, unsigned threads, std::uint64_t in_flight, std::uint64_t events,
            wait_mode wait = wait_mode::as_configured, double scale = 1e-4) {
  process p = make_process(load_config(file), timing_options{wait, scale, 0});
  run_options o = fw_test::options(events, in_flight, threads);
  const run_report r = single ? run_single_threaded(p, o) : run_threaded(p, o);
  EXPECT_LE(r.peak_in_flight, in_flight);
  return {r.checksum, r.events};
}

class RealConfiguration : public ::testing::TestWithParam<const char*> {};

TEST_P(RealConfiguration, ThreadedChecksumEqualsSingleThreadedForEveryCombination) {
  FW_TEST_NEEDS_CMS(GetParam());
  heddle_test::watchdog dog("real configuration checksums", std::chrono::seconds(600));
  const std::string file = cms(GetParam());
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(30, 12);
  const outcome reference = run(file, true, 1, 1, events);
  ASSERT_EQ(reference.events, events);
  for (unsigned threads : {1u, 2u, 3u})
    for (std::uint64_t in_flight : {1u, 2u, 5u, 16u})
      for (wait_mode wait : {wait_mode::as_configured, wait_mode::timer}) {
        const outcome o = run(file, false, threads, in_flight, events, wait);
        EXPECT_EQ(o.events, events);
        EXPECT_EQ(o.checksum, reference.checksum)
            << GetParam() << ": threads " << threads << ", in flight " << in_flight << ", wait " << to_string(wait);
      }
  // Sleeping instead of spinning changes nothing either.
  EXPECT_EQ(run(file, false, 2, 4, events, wait_mode::sleep).checksum, reference.checksum);
}

INSTANTIATE_TEST_SUITE_P(Cms, RealConfiguration, ::testing::Values(fw_test::hipileup, fw_test::minbias));

TEST(Processor, TheChecksumDependsOnTheEvents) {
  const std::string file = fw_test::own("chain.json");
  const outcome a = run(file, true, 1, 1, 10, wait_mode::as_configured, 1e-3);
  const outcome b = run(file, true, 1, 1, 11, wait_mode::as_configured, 1e-3);
  EXPECT_NE(a.checksum, b.checksum);
  EXPECT_EQ(a.checksum, run(file, true, 1, 1, 10, wait_mode::as_configured, 1e-3).checksum);
}

// Each configuration runs 100 events with the single-threaded reference's checksum, threaded with 1,
// 4 and 32 events in flight; the last two, which differ only in how their producers wait (spinning,
// ExternalWork's acquire), give the same products.
void expect_runs_like_the_reference(const std::string& simple, const std::string& busy, const std::string& acquire) {
  for (const std::string& file : {simple, busy, acquire}) {
    const outcome reference = run(file, true, 1, 1, 100, wait_mode::as_configured, 1e-3);
    EXPECT_EQ(reference.events, 100u) << file;
    for (std::uint64_t in_flight : {1u, 4u, 32u}) {
      const outcome o = run(file, false, 2, in_flight, 100, wait_mode::as_configured, 1e-3);
      EXPECT_EQ(o.events, 100u) << file;
      EXPECT_EQ(o.checksum, reference.checksum) << file << " in flight " << in_flight;
    }
  }
  EXPECT_EQ(run(busy, false, 2, 4, 50, wait_mode::as_configured, 1e-3).checksum,
            run(acquire, false, 2, 4, 50, wait_mode::as_configured, 1e-3).checksum);
}

TEST(Processor, TheProjectsConfigurationsRun) {
  expect_runs_like_the_reference(fw_test::own("one_filter.json"), fw_test::own("chain.json"),
                                 fw_test::own("chain_acquire.json"));
}

// The study's small examples, unchanged.
TEST(Processor, EveryExampleConfigurationRuns) {
  for (const char* name : {"simple_config.json", "test_config.json", "test_acquire_config.json"})
    FW_TEST_NEEDS_CMS(std::string("examples/") + name);
  expect_runs_like_the_reference(cms("examples/simple_config.json"), cms("examples/test_config.json"),
                                 cms("examples/test_acquire_config.json"));
}

// A configuration whose module `label` throws on every event: the run, single-threaded and threaded,
// stops cleanly with an error naming the module and the event.
void expect_stops_at(const std::string& file, const std::string& label) {
  heddle_test::watchdog dog("exception " + file, std::chrono::seconds(120));
  const process_config c = load_config(file);
  for (bool single : {true, false}) {
    process p = make_process(c, timing_options{wait_mode::as_configured, 1e-3, 0});
    try {
      (single ? run_single_threaded : run_threaded)(p, fw_test::options(c.events, 4));
      ADD_FAILURE() << file << " ran to the end";
    } catch (const module_error& e) {
      EXPECT_EQ(e.label(), label) << file;
      EXPECT_LT(e.event(), c.events);
      if (single) {
        EXPECT_EQ(e.event(), 0u);
      }
      EXPECT_EQ(e.run(), 1u);
      EXPECT_NE(std::string(e.what()).find("module '" + label + "' failed on event "), std::string::npos) << e.what();
    }
  }
}

TEST(Processor, AThrowingModuleStopsTheRunWithTheModuleAndTheEvent) {
  expect_stops_at(fw_test::own("throwing_filter.json"), "veto");
  expect_stops_at(fw_test::own("throwing_producer.json"), "calibration");
}

// The study's exception examples, unchanged.
TEST(Processor, TheExceptionExamplesStopWithTheModuleAndTheEvent) {
  FW_TEST_NEEDS_CMS("examples/filter_exception_config.json");
  FW_TEST_NEEDS_CMS("examples/producer_exception_config.json");
  expect_stops_at(cms("examples/filter_exception_config.json"), "third");
  expect_stops_at(cms("examples/producer_exception_config.json"), "beta");
}

}  // namespace

}  // namespace processor_test
