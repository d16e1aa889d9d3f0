// The processors on the study's configurations: the multi-threaded one gives the single-threaded
// reference's checksum for every number of threads, events in flight and way of waiting.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>

#include "fw_test_support.hpp"

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
  const std::string file = cms("examples/test_config.json");
  const outcome a = run(file, true, 1, 1, 10, wait_mode::as_configured, 1e-3);
  const outcome b = run(file, true, 1, 1, 11, wait_mode::as_configured, 1e-3);
  EXPECT_NE(a.checksum, b.checksum);
  EXPECT_EQ(a.checksum, run(file, true, 1, 1, 10, wait_mode::as_configured, 1e-3).checksum);
}

TEST(Processor, EveryExampleConfigurationRuns) {
  for (const char* name : {"simple_config.json", "test_config.json", "test_acquire_config.json"}) {
    const std::string file = cms(std::string("examples/") + name);
    const outcome reference = run(file, true, 1, 1, 100, wait_mode::as_configured, 1e-3);
    EXPECT_EQ(reference.events, 100u) << name;
    for (std::uint64_t in_flight : {1u, 4u, 32u}) {
      const outcome o = run(file, false, 2, in_flight, 100, wait_mode::as_configured, 1e-3);
      EXPECT_EQ(o.events, 100u) << name;
      EXPECT_EQ(o.checksum, reference.checksum) << name << " in flight " << in_flight;
    }
  }
  // test_config and test_acquire_config differ only in how alpha and beta wait: same products.
  EXPECT_EQ(run(cms("examples/test_config.json"), false, 2, 4, 50, wait_mode::as_configured, 1e-3).checksum,
            run(cms("examples/test_acquire_config.json"), false, 2, 4, 50, wait_mode::as_configured, 1e-3).checksum);
}

// The exception examples: the run stops cleanly with an error naming the module and the event.
TEST(Processor, TheExceptionExamplesStopWithTheModuleAndTheEvent) {
  heddle_test::watchdog dog("exception examples", std::chrono::seconds(120));
  struct expectation {
    const char* file;
    const char* label;
  };
  for (auto [name, label] : {expectation{"filter_exception_config.json", "third"}, expectation{"producer_exception_config.json", "beta"}}) {
    for (bool single : {true, false}) {
      process p = make_process(load_config(cms(std::string("examples/") + name)), timing_options{wait_mode::as_configured, 1e-3, 0});
      try {
        (single ? run_single_threaded : run_threaded)(p, fw_test::options(3000, 4));
        ADD_FAILURE() << name << " ran to the end";
      } catch (const module_error& e) {
        EXPECT_EQ(e.label(), label) << name;
        EXPECT_LT(e.event(), 3000u);
        if (single) {
          EXPECT_EQ(e.event(), 0u);
        }
        EXPECT_EQ(e.run(), 1u);
        EXPECT_NE(std::string(e.what()).find("module '" + std::string(label) + "' failed on event "), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
