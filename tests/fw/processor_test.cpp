// SPDX-License-Identifier: Apache-2.0
// The processors on the study's configurations and the project's own: the multi-threaded one gives
// the single-threaded reference's checksum for every number of threads, events in flight and way of
// waiting; jobs from a first event (run_options::first_event) run the parts of a job from 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <heddle/fw.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "fw_test_support.hpp"
#include "study/study.hpp"

namespace processor_test {
namespace {

using namespace heddle::fw;
using namespace heddle::fw::study;  // the timing modules the configurations use
using fw_test::cms;

struct outcome {
  std::uint64_t checksum;
  std::uint64_t events;
};

outcome run(const process_config& config, bool single, unsigned threads, std::uint64_t in_flight, std::uint64_t events,
            wait_mode wait = wait_mode::as_configured, double scale = 1e-4) {
  process p = make_process(study::with_timing(config, {wait, scale, 0}));
  run_options o = fw_test::options(events, in_flight, threads);
  const run_report r = single ? run_single_threaded(p, o) : run_threaded(p, o);
  EXPECT_LE(r.peak_in_flight, in_flight);
  return {r.checksum, r.events};
}
outcome run(const std::string& file, bool single, unsigned threads, std::uint64_t in_flight, std::uint64_t events,
            wait_mode wait = wait_mode::as_configured, double scale = 1e-4) {
  return run(load_config(file), single, threads, in_flight, events, wait, scale);
}

class RealConfiguration : public ::testing::TestWithParam<const char*> {};

TEST_P(RealConfiguration, ThreadedChecksumEqualsSingleThreadedForEveryCombination) {
  FW_TEST_NEEDS_CMS(GetParam());
  heddle_test::watchdog dog("real configuration checksums", std::chrono::seconds(600));
  // Read once, each run's process made from it: the study's files are 3 MB of JSON, whose parsing
  // was 70% of the test's time under ThreadSanitizer when each of the 26 runs read the file again.
  const process_config config = load_config(cms(GetParam()));
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(30, 12);
  const outcome reference = run(config, true, 1, 1, events);
  ASSERT_EQ(reference.events, events);
  for (unsigned threads : {1u, 2u, 3u})
    for (std::uint64_t in_flight : {1u, 2u, 5u, 16u})
      for (wait_mode wait : {wait_mode::as_configured, wait_mode::timer}) {
        const outcome o = run(config, false, threads, in_flight, events, wait);
        EXPECT_EQ(o.events, events);
        EXPECT_EQ(o.checksum, reference.checksum)
            << GetParam() << ": threads " << threads << ", in flight " << in_flight << ", wait " << to_string(wait);
      }
  // Sleeping instead of spinning changes nothing either.
  EXPECT_EQ(run(config, false, 2, 4, events, wait_mode::sleep).checksum, reference.checksum);
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
    process p = make_process(study::with_timing(c, {wait_mode::as_configured, 1e-3, 0}));
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

// --- run_options::first_event: a job that starts at event K runs a job from 0's events K.. exactly.

// Events [first, first + events) of chain.json (filters: path decisions in the checksum), in runs of
// 30 and lumis of 7 events, on either processor.
run_report part_of_chain(bool single, std::uint64_t first, std::uint64_t events) {
  process p = make_process(study::with_timing(load_config(fw_test::own("chain.json")),
                                              {wait_mode::as_configured, 1e-3, 0}));
  run_options o = fw_test::options(events, 4);
  o.first_event = first;
  o.events_per_run = 30;
  o.events_per_lumi = 7;
  o.concurrent_lumis = 2;
  return single ? run_single_threaded(p, o) : run_threaded(p, o);
}

// chain.json makes no lumi or run products: wherever a job of 100 events is split, even inside a
// run and a lumi, the two parts' checksums add up to the whole's, run by run, on both processors.
TEST(Processor, JobsFromFirstEventAddUpToTheWholeJob) {
  heddle_test::watchdog dog("Processor.JobsFromFirstEventAddUpToTheWholeJob", std::chrono::seconds(300));
  const std::uint64_t n = 100;
  const run_report whole = part_of_chain(true, 0, n);
  ASSERT_EQ(whole.runs.size(), 4u);
  EXPECT_EQ(whole.events_checksum, whole.checksum);  // no lumi or run products
  EXPECT_EQ(part_of_chain(false, 0, n).checksum, whole.checksum);
  // At the start and the end; at a run boundary; inside a run at a lumi boundary (44 = 30 + 7 * 2);
  // inside a lumi (1, 49, 99).
  for (const std::uint64_t k : {0u, 1u, 30u, 44u, 49u, 99u, 100u}) {
    for (const bool single : {true, false}) {
      SCOPED_TRACE("split at " + std::to_string(k) + (single ? ", single-threaded" : ", threaded"));
      const run_report a = part_of_chain(single, 0, k), b = part_of_chain(single, k, n - k);
      EXPECT_EQ(a.events, k);
      EXPECT_EQ(b.events, n - k);
      EXPECT_EQ(a.checksum + b.checksum, whole.checksum);
      EXPECT_EQ(a.events_checksum + b.events_checksum, whole.events_checksum);
      // The runs of the two parts, a run split between them merged: the whole's runs, numbers,
      // events and checksums; its lumis too, less the one lumi begun by both parts.
      std::vector<run_checksum> joined = a.runs;
      for (const run_checksum& r : b.runs) {
        if (!joined.empty() && joined.back().run == r.run) {
          joined.back().events += r.events;
          joined.back().checksum += r.checksum;
          joined.back().lumis += r.lumis - (k % 30 % 7 != 0 ? 1 : 0);
        } else {
          joined.push_back(r);
        }
      }
      ASSERT_EQ(joined.size(), whole.runs.size());
      for (std::size_t i = 0; i < joined.size(); ++i) {
        EXPECT_EQ(joined[i].run, whole.runs[i].run) << "run " << i;
        EXPECT_EQ(joined[i].events, whole.runs[i].events) << "run " << i;
        EXPECT_EQ(joined[i].checksum, whole.runs[i].checksum) << "run " << i;
        EXPECT_EQ(joined[i].lumis, whole.runs[i].lumis) << "run " << i;
      }
    }
  }
}

// The ids each event of [first, first + events) got, in event order, from an analyzer on either processor.
std::vector<event_id> ids_of(const run_options& o, bool single) {
  std::mutex m;
  std::vector<event_id> ids;
  process p("ids");
  fw_test::add_probe(p, fw_test::decl("ids", module_role::analyzer), [&](const fw_test::inputs& in) {
    std::lock_guard lock(m);
    ids.push_back(in.event().id());
    return 0;
  });
  p.add_path("p", {"ids"});
  (void)(single ? run_single_threaded(p, o) : run_threaded(p, o));
  std::sort(ids.begin(), ids.end(), [](const event_id& x, const event_id& y) { return x.event < y.event; });
  return ids;
}

run_options numbered(std::uint64_t first, std::uint64_t events, std::uint64_t per_run, std::uint64_t per_lumi) {
  run_options o = fw_test::options(events, 2);
  o.first_event = first;
  o.events_per_run = per_run;
  o.events_per_lumi = per_lumi;
  return o;
}

// The largest event numbers run, with the ids worked out here; a range past 2^64 - 1, or a run or
// lumi number past 2^32 - 1, is refused with a config_error (heddle-fw: exit 2) before any event
// or transition runs, by both processors and by check_run_options itself.
TEST(Processor, FirstEventRunsToTheLastNumbersAndRefusesToPassThem) {
  constexpr std::uint64_t most = ~std::uint64_t{0}, most_id = ~std::uint32_t{0}, big_run = std::uint64_t{1} << 40;
  struct good {
    run_options o;
    std::vector<event_id> ids;
  };
  const std::vector<good> goods = {
      {numbered(most - 3, 3, 0, 0), {{1, 1, most - 3}, {1, 1, most - 2}, {1, 1, most - 1}}},  // ends at 2^64 - 1
      {numbered(most_id - 2, 2, 1, 0),
       {{std::uint32_t(most_id - 1), 1, most_id - 2}, {std::uint32_t(most_id), 1, most_id - 1}}},
      {numbered(most_id - 2, 2, 0, 1),
       {{1, std::uint32_t(most_id - 1), most_id - 2}, {1, std::uint32_t(most_id), most_id - 1}}},
      {numbered(big_run + 5, 3, big_run, 1), {{2, 6, big_run + 5}, {2, 7, big_run + 6}, {2, 8, big_run + 7}}},
  };
  for (const good& g : goods)
    for (const bool single : {true, false}) {
      SCOPED_TRACE("first " + std::to_string(g.o.first_event) + (single ? ", single-threaded" : ", threaded"));
      EXPECT_NO_THROW(check_run_options(g.o));
      EXPECT_EQ(ids_of(g.o, single), g.ids);
    }
  struct bad {
    run_options o;
    const char* says;
  };
  const std::vector<bad> bads = {
      {numbered(most, 1, 0, 0), "first_event 18446744073709551615 + events 1 passes 2^64 - 1"},
      {numbered(1, most, 0, 0), "first_event 1 + events 18446744073709551615 passes 2^64 - 1"},
      {numbered(most - 5, 10, 0, 0), "passes 2^64 - 1"},
      {numbered(most_id - 1, 2, 1, 0), "would be in run 4294967296, past 2^32 - 1"},
      {numbered(most_id - 1, 2, 0, 1), "would be in lumi 4294967296 of its run, past 2^32 - 1"},
      // The last event is lumi 5 of run 2, but the first run's last lumi is 2^40.
      {numbered(big_run - 5, 10, big_run, 1), "would be in lumi 1099511627776 of its run"},
  };
  for (const bad& b : bads) {
    SCOPED_TRACE(b.says);
    try {
      check_run_options(b.o);
      ADD_FAILURE() << "check_run_options accepted it";
    } catch (const config_error& e) {
      EXPECT_NE(std::string(e.what()).find(b.says), std::string::npos) << e.what();
    }
    for (const bool single : {true, false}) {
      std::atomic<int> calls{0};
      process p("refused");
      fw_test::add_probe(p, fw_test::decl("a", module_role::analyzer), [&](const fw_test::inputs&) { return ++calls; });
      p.add_path("p", {"a"});
      EXPECT_THROW((void)(single ? run_single_threaded(p, b.o) : run_threaded(p, b.o)), config_error);
      EXPECT_EQ(calls.load(), 0);
    }
  }
}

}  // namespace

}  // namespace processor_test
