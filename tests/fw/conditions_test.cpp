// SPDX-License-Identifier: Apache-2.0
// Conditions: records, intervals of validity from a source, condition producers made once per
// interval and prefetched for the modules that read them, in both processors; the conditions file's
// errors; finalize's checks.
#include <gtest/gtest.h>

#include <atomic>
#include <heddle/fw.hpp>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace fw = heddle::fw;

namespace {

struct CalibrationRecord {};
struct Calibration {
  double scale = 0;
  std::uint32_t first_run = 0;
};

// Makes the calibration of each interval from its payload ("scale"); counts its calls.
class calibration_producer final : public fw::es_producer {
 public:
  explicit calibration_producer(std::atomic<int>* calls, bool fail = false)
      : calls_(calls), fail_(fail), token_(es_produces<Calibration, CalibrationRecord>()) {}
  void produce(fw::es_context& c) const override {
    calls_->fetch_add(1, std::memory_order_relaxed);
    if (fail_) throw std::runtime_error("no database");
    c.emplace(token_, Calibration{c.payload().get<double>("scale", 1.0), c.start().run});
  }

 private:
  std::atomic<int>* calls_;
  bool fail_;
  fw::es_put_token<Calibration, CalibrationRecord> token_;
};

// Each event: its number times the calibration's scale.
class calibrated final : public fw::global::EDProducer<> {
 public:
  calibrated() : out_(produces<double>()) {}
  void produce(fw::event& e, const fw::event_setup& s) const override {
    e.emplace(out_, double(e.id().event) * s.get(calibration_).scale);
  }

 private:
  fw::put_token<double> out_;
  fw::es_token<Calibration, CalibrationRecord> calibration_ = es_consumes<Calibration, CalibrationRecord>();
};

// Collects every event's calibrated value, and the calibration each begin_run saw.
class collector final : public fw::global::EDAnalyzer<> {
 public:
  collector() : in_(consumes<double>(fw::input_tag("calibrated"))) {}
  void analyze(const fw::event& e, const fw::event_setup&) const override {
    std::lock_guard lock(m);
    values[e.id().event] = e.get(in_);
  }
  void begin_run(const fw::run& r, const fw::event_setup& s) override {
    std::lock_guard lock(m);
    run_scale[r.number()] = s.get(calibration_).scale;
  }
  mutable std::mutex m;
  mutable std::map<std::uint64_t, double> values;
  std::map<std::uint32_t, double> run_scale;

 private:
  fw::get_token<double> in_;
  fw::es_token<Calibration, CalibrationRecord> calibration_ = es_consumes<Calibration, CalibrationRecord>();
};

fw::conditions two_intervals() {
  return fw::conditions::from_json(R"({"records": {"CalibrationRecord": [
      {"firstRun": 1, "payload": {"scale": 2.0}},
      {"firstRun": 3, "firstLumi": 1, "payload": {"scale": 10.0}}]}})",
                                   "two.json");
}

struct job {
  fw::process p{"conditions test"};
  std::atomic<int> calls{0};
  collector* out = nullptr;
  explicit job(bool fail = false, bool sourced = true) {
    p.add_es<calibration_producer>({.label = "calibration"}, &calls, fail);
    p.add<calibrated>({.label = "calibrated"});
    out = &p.add<collector>({.label = "collector"});
    p.add_end_path("end", {"collector"});
    if (sourced) p.set_conditions(two_intervals());
  }
};

fw::run_options options(unsigned threads, std::uint64_t in_flight) {
  fw::run_options o;
  o.threads = threads;
  o.events_in_flight = in_flight;
  o.events = 40;
  o.events_per_run = 10;  // runs 1..4: runs 1-2 in the first interval, 3-4 in the second
  return o;
}

void expect_values(const collector& c) {
  ASSERT_EQ(c.values.size(), 40u);
  for (const auto& [event, value] : c.values) {
    const std::uint32_t run = static_cast<std::uint32_t>(event / 10 + 1);
    EXPECT_EQ(value, double(event) * (run >= 3 ? 10.0 : 2.0)) << "event " << event;
  }
  EXPECT_EQ(c.run_scale.size(), 4u);
  for (const auto& [run, scale] : c.run_scale) EXPECT_EQ(scale, run >= 3 ? 10.0 : 2.0) << "run " << run;
}

}  // namespace

TEST(Conditions, EachIntervalMadeOnceSingleThreaded) {
  job j;
  const fw::run_report r = fw::run_single_threaded(j.p, options(1, 1));
  EXPECT_EQ(r.events, 40u);
  expect_values(*j.out);
  EXPECT_EQ(j.calls.load(), 2);
}

TEST(Conditions, EachIntervalMadeOnceAndPrefetchedThreaded) {
  for (unsigned threads : {1u, 2u, 4u})
    for (std::uint64_t in_flight : {1u, 3u, 16u}) {
      heddle_test::watchdog dog("conditions threaded", std::chrono::seconds(120));
      job j;
      const fw::run_report r = fw::run_threaded(j.p, options(threads, in_flight));
      EXPECT_EQ(r.events, 40u);
      expect_values(*j.out);
      EXPECT_EQ(j.calls.load(), 2) << threads << " threads, " << in_flight << " in flight";
    }
}

TEST(Conditions, SameChecksumBothProcessors) {
  job a, b;
  EXPECT_EQ(fw::run_single_threaded(a.p, options(1, 1)).checksum, fw::run_threaded(b.p, options(2, 8)).checksum);
}

TEST(Conditions, WithoutSourceOneIntervalEmptyPayload) {
  job j(false, false);
  fw::run_threaded(j.p, options(2, 8));
  ASSERT_EQ(j.out->values.size(), 40u);
  for (const auto& [event, value] : j.out->values) EXPECT_EQ(value, double(event));  // scale defaults to 1
  EXPECT_EQ(j.calls.load(), 1);
}

TEST(Conditions, ProducerFailureStopsTheJobNamingIt) {
  for (bool threaded : {false, true}) {
    job j(true);
    try {
      threaded ? fw::run_threaded(j.p, options(2, 4)) : fw::run_single_threaded(j.p, options(1, 1));
      ADD_FAILURE() << "no error";
    } catch (const fw::module_error& x) {
      const std::string what = x.what();
      EXPECT_NE(what.find("condition producer 'calibration' failed for record"), std::string::npos) << what;
      EXPECT_NE(what.find("CalibrationRecord"), std::string::npos) << what;
      EXPECT_NE(what.find("no database"), std::string::npos) << what;
    }
  }
}

TEST(Conditions, RunBeforeTheFirstIntervalFails) {
  job j;
  j.p.set_conditions(fw::conditions::from_json(R"({"records": {"CalibrationRecord": [{"firstRun": 2}]}})",
                                               "late.json"));
  try {
    fw::run_threaded(j.p, options(2, 4));
    ADD_FAILURE() << "no error";
  } catch (const fw::module_error& x) {
    EXPECT_NE(std::string(x.what()).find("no conditions for record"), std::string::npos) << x.what();
  }
}

TEST(Conditions, FinalizeNamesWhatIsMissingOrMadeTwice) {
  {
    fw::process p("missing");
    p.add<calibrated>({.label = "calibrated"});
    try {
      p.finalize();
      ADD_FAILURE() << "no error";
    } catch (const fw::config_error& x) {
      EXPECT_NE(std::string(x.what()).find(
                    "'calibrated': consumes conditions Calibration of record CalibrationRecord, but no "
                    "condition producer makes them"),
                std::string::npos)
          << x.what();
    }
  }
  {
    fw::process p("twice");
    std::atomic<int> calls{0};
    p.add_es<calibration_producer>({.label = "one"}, &calls);
    p.add_es<calibration_producer>({.label = "two"}, &calls);
    try {
      p.finalize();
      ADD_FAILURE() << "no error";
    } catch (const fw::config_error& x) {
      EXPECT_NE(std::string(x.what()).find("'two': makes Calibration of record CalibrationRecord, also made by 'one'"),
                std::string::npos)
          << x.what();
    }
  }
}

TEST(Conditions, FileErrorsSayWhere) {
  auto error = [](const char* text) {
    try {
      fw::conditions::from_json(text, "c.json");
    } catch (const fw::config_error& x) {
      return std::string(x.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{\n  [").rfind("c.json:2:3: malformed JSON: ", 0), 0u) << error("{\n  [");
  EXPECT_EQ(error(R"({"records": {"R": [{"firstLumi": 2}]}})"),
            "c.json: records.R[0]: missing required key 'firstRun'");
  EXPECT_EQ(
      error(R"({"records": {"R": [{"firstRun": 2}, {"firstRun": 1}]}})"),
      "c.json: records.R[1]: interval starts (run 1, lumi 1) at or before the previous one: intervals are listed in "
      "increasing order");
  EXPECT_EQ(error(R"({"records": {"R": [{"firstRun": 0}]}})"),
            "c.json: records.R[0].firstRun: expected a run or lumi number (1 to 4294967295), found 0");
  EXPECT_EQ(error(R"({"records": {"R": [{"firstRun": 1, "scale": 2}]}})"),
            "c.json: records.R[0]: unknown key 'scale' (known here: firstRun, firstLumi, payload)");
  EXPECT_EQ(error(R"({"recs": {}})"),
            "c.json: (top level): expected an object with \"records\": { \"RecordName\": [intervals] }");
}

TEST(Conditions, DeclarationsAreChecked) {
  struct two_records final : fw::es_producer {
    two_records() {
      (void)es_produces<Calibration, CalibrationRecord>();
      (void)es_produces<double, int>();
    }
    void produce(fw::es_context&) const override {}
  };
  EXPECT_THROW(two_records{}, std::logic_error);
}

namespace {
// Reads the calibration in its lumi transitions and per event, recording what each lumi and event saw.
class lumi_watcher final : public fw::global::EDAnalyzer<> {
 public:
  void analyze(const fw::event& e, const fw::event_setup& s) const override {
    std::lock_guard lock(m);
    per_event[e.id().event] = {e.id().lumi, s.get(calibration_).scale};
  }
  void begin_luminosity_block(const fw::luminosity_block& l, const fw::event_setup& s) override {
    std::lock_guard lock(m);
    per_lumi[l.number()] = s.get(calibration_).scale;
  }
  mutable std::mutex m;
  mutable std::map<std::uint64_t, std::pair<std::uint32_t, double>> per_event;
  std::map<std::uint32_t, double> per_lumi;

 private:
  fw::es_token<Calibration, CalibrationRecord> calibration_ = es_consumes<Calibration, CalibrationRecord>();
};
}  // namespace

TEST(Conditions, ChangeAtLumiBoundaries) {
  for (unsigned concurrent : {1u, 2u, 3u})
    for (bool threaded : {false, true}) {
      fw::process p("lumi conditions");
      std::atomic<int> calls{0};
      p.add_es<calibration_producer>({.label = "calibration"}, &calls);
      lumi_watcher& w = p.add<lumi_watcher>({.label = "watcher"});
      p.add_end_path("end", {"watcher"});
      // Lumis 1-2 at scale 2, 3 at scale 5, 4 onwards at scale 10.
      p.set_conditions(fw::conditions::from_json(R"({"records": {"CalibrationRecord": [
          {"firstRun": 1, "payload": {"scale": 2.0}}, {"firstRun": 1, "firstLumi": 3, "payload": {"scale": 5.0}},
          {"firstRun": 1, "firstLumi": 4, "payload": {"scale": 10.0}}]}})",
                                                 "lumis.json"));
      fw::run_options o;
      o.events = 30;
      o.events_per_lumi = 5;  // lumis 1..6 of run 1
      o.concurrent_lumis = concurrent;
      o.threads = threaded ? 2 : 1;
      o.events_in_flight = threaded ? 8 : 1;
      threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o);
      auto scale = [](std::uint32_t lumi) { return lumi <= 2 ? 2.0 : lumi == 3 ? 5.0 : 10.0; };
      ASSERT_EQ(w.per_event.size(), 30u);
      for (const auto& [event, seen] : w.per_event) {
        EXPECT_EQ(seen.first, event / 5 + 1) << "event " << event;
        EXPECT_EQ(seen.second, scale(seen.first)) << "event " << event;
      }
      ASSERT_EQ(w.per_lumi.size(), 6u);
      for (const auto& [lumi, s] : w.per_lumi) EXPECT_EQ(s, scale(lumi)) << "lumi " << lumi;
      EXPECT_EQ(calls.load(), 3) << concurrent << " concurrent lumis, threaded " << threaded;
    }
}
