// SPDX-License-Identifier: Apache-2.0
// Luminosity blocks: the order of the transitions per module and per stream instance, every event's
// lumi, per-lumi summaries made at end_luminosity_block (the same serial and with 1, 2, 3 lumis
// open at once and many events in flight), lumi products in the checksum, jobs from a first event
// (the whole job's runs and lumis; splits of a job against the whole), exceptions in lumi
// transitions, the checks of lumi products at finalize(), and the configuration's keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <heddle/fw.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fw_test_support.hpp"

namespace lumi_test {
namespace {

namespace fw = heddle::fw;
using lumi_id = fw::luminosity_block_id;

fw::module_spec spec(const std::string& label) { return {label, "test module", "", {}}; }

// The lumi an event belongs to, worked out here independently of the framework.
lumi_id expected_lumi(std::uint64_t e, std::uint64_t per_run, std::uint64_t per_lumi) {
  const std::uint64_t run = per_run ? e / per_run : 0, in_run = per_run ? e % per_run : e;
  return {static_cast<std::uint32_t>(run + 1), static_cast<std::uint32_t>(per_lumi ? in_run / per_lumi + 1 : 1)};
}

// What every watching module saw, in the order it happened (one lock, so one order).
class journal {
 public:
  enum class kind { begin_job, begin_run, begin_lumi, event_start, event_end, end_lumi, end_run, end_job };
  struct entry {
    kind what;
    std::string module;
    int instance;
    fw::event_id id;  // lumi transitions: run and lumi; run transitions: run
  };
  void add(kind k, const std::string& module, int instance, fw::event_id id = {}) {
    std::lock_guard lock(m_);
    entries_.push_back({k, module, instance, id});
  }
  std::vector<entry> entries() const {
    std::lock_guard lock(m_);
    return entries_;
  }

 private:
  mutable std::mutex m_;
  std::vector<entry> entries_;
};
using K = journal::kind;

// Records every transition and event; the last event of each lumi lingers a little, so that with
// several lumis open the next lumi's events have a chance to run beside it.
class watcher final : public fw::global::EDAnalyzer<> {
 public:
  watcher(std::shared_ptr<journal> j, std::uint64_t per_run, std::uint64_t per_lumi)
      : j_(std::move(j)), per_run_(per_run), per_lumi_(per_lumi) {}
  void begin_job() override { j_->add(K::begin_job, label(), 0); }
  void end_job() override { j_->add(K::end_job, label(), 0); }
  void begin_run(const fw::run& r, const fw::event_setup&) override {
    j_->add(K::begin_run, label(), 0, {r.number(), 0, 0});
  }
  void end_run(fw::run& r, const fw::event_setup&) override { j_->add(K::end_run, label(), 0, {r.number(), 0, 0}); }
  void begin_luminosity_block(const fw::luminosity_block& l, const fw::event_setup&) override {
    j_->add(K::begin_lumi, label(), 0, {l.run(), l.number(), 0});
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    j_->add(K::end_lumi, label(), 0, {l.run(), l.number(), 0});
  }
  void analyze(const fw::event& e, const fw::event_setup&) const override {
    j_->add(K::event_start, label(), 0, e.id());
    const std::uint64_t next = e.id().event + 1;
    if (per_lumi_ && expected_lumi(next, per_run_, per_lumi_) != lumi_id{e.id().run, e.id().lumi})
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    j_->add(K::event_end, label(), 0, e.id());
  }

 private:
  std::shared_ptr<journal> j_;
  std::uint64_t per_run_, per_lumi_;
};

// The same per stream: each instance records under its own number.
class stream_watcher final : public fw::stream::EDAnalyzer<> {
 public:
  stream_watcher(std::shared_ptr<journal> j, std::shared_ptr<std::atomic<int>> instances)
      : j_(std::move(j)), instance_(instances->fetch_add(1)) {}
  void begin_job() override { j_->add(K::begin_job, label(), instance_); }
  void end_job() override { j_->add(K::end_job, label(), instance_); }
  void begin_run(const fw::run& r, const fw::event_setup&) override {
    j_->add(K::begin_run, label(), instance_, {r.number(), 0, 0});
  }
  void end_run(fw::run& r, const fw::event_setup&) override {
    j_->add(K::end_run, label(), instance_, {r.number(), 0, 0});
  }
  void begin_luminosity_block(const fw::luminosity_block& l, const fw::event_setup&) override {
    j_->add(K::begin_lumi, label(), instance_, {l.run(), l.number(), 0});
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    j_->add(K::end_lumi, label(), instance_, {l.run(), l.number(), 0});
  }
  void analyze(const fw::event& e, const fw::event_setup&) override {
    j_->add(K::event_start, label(), instance_, e.id());
    j_->add(K::event_end, label(), instance_, e.id());
  }

 private:
  std::shared_ptr<journal> j_;
  int instance_;
};

// A one:: module: its presence limits the lumis open at once to 1.
class serial_watcher final : public fw::one::EDAnalyzer<> {
 public:
  void analyze(const fw::event&, const fw::event_setup&) override {}
};

// Checks one module instance's journal of a job of events [first, first + events): begin_job
// first and end_job last; runs in order, from the first event's, lumis in order within each (from
// the first event's in its run, from 1 in the next), begun before any of their events and ended
// after all of them (every event of the lumi in the job when `every_event`), at most `max_open`
// open at once, none open across a run boundary; and each event in the lumi its number says.
// Returns the lumis seen.
std::vector<lumi_id> check_sequence(const std::vector<journal::entry>& all, const std::string& module, int instance,
                                    std::uint64_t events, std::uint64_t per_run, std::uint64_t per_lumi,
                                    unsigned max_open, bool every_event, std::uint64_t first = 0) {
  std::vector<journal::entry> seq;
  for (const auto& x : all)
    if (x.module == module && x.instance == instance) seq.push_back(x);
  const std::string who = module + "[" + std::to_string(instance) + "]";
  std::vector<lumi_id> lumis;
  EXPECT_GE(seq.size(), 2u) << who;
  if (seq.size() < 2) return lumis;
  EXPECT_EQ(seq.front().what, K::begin_job) << who;
  EXPECT_EQ(seq.back().what, K::end_job) << who;
  const lumi_id first_lumi = expected_lumi(first, per_run, per_lumi);
  std::uint32_t run = 0;
  bool run_open = false;
  lumi_id last_begun{0, 0};
  std::map<lumi_id, std::pair<std::uint64_t, std::uint64_t>> open;  // lumi -> events started, ended
  std::set<std::uint64_t> seen;
  for (std::size_t i = 1; i + 1 < seq.size(); ++i) {
    const journal::entry& x = seq[i];
    const lumi_id l{x.id.run, x.id.lumi};
    switch (x.what) {
      case K::begin_run:
        EXPECT_FALSE(run_open) << who;
        EXPECT_EQ(x.id.run, run == 0 ? first_lumi.run : run + 1) << who;
        run = x.id.run;
        run_open = true;
        break;
      case K::end_run:
        EXPECT_TRUE(run_open && x.id.run == run) << who << " end_run " << x.id.run;
        EXPECT_TRUE(open.empty()) << who << ": a lumi is open at the end of run " << run;
        run_open = false;
        break;
      case K::begin_lumi:
        EXPECT_TRUE(run_open && l.run == run) << who << " lumi " << l.lumi << " of run " << l.run;
        EXPECT_EQ(l.lumi, last_begun.run == run   ? last_begun.lumi + 1
                          : run == first_lumi.run ? first_lumi.lumi
                                                  : 1u)
            << who << " run " << run;
        last_begun = l;
        open[l] = {0, 0};
        EXPECT_LE(open.size(), max_open) << who;
        lumis.push_back(l);
        break;
      case K::end_lumi: {
        auto it = open.find(l);
        EXPECT_TRUE(it != open.end()) << who << " ends lumi " << l.lumi << " of run " << l.run << " not open";
        if (it == open.end()) break;
        EXPECT_EQ(it->second.first, it->second.second) << who << ": lumi " << l.lumi << " ended with events running";
        EXPECT_EQ(open.begin()->first, l) << who << ": lumis end in order";
        if (every_event) {
          std::uint64_t expected = 0;
          for (std::uint64_t e = first; e < first + events; ++e) expected += expected_lumi(e, per_run, per_lumi) == l;
          EXPECT_EQ(it->second.first, expected) << who << ": events of lumi " << l.lumi << " of run " << l.run;
        }
        open.erase(it);
        break;
      }
      case K::event_start: {
        EXPECT_EQ(l, expected_lumi(x.id.event, per_run, per_lumi)) << who << " event " << x.id.event;
        auto it = open.find(l);
        EXPECT_TRUE(it != open.end()) << who << ": event " << x.id.event << " outside its lumi";
        if (it != open.end()) ++it->second.first;
        EXPECT_TRUE(seen.insert(x.id.event).second) << who << ": event " << x.id.event << " twice";
        EXPECT_TRUE(x.id.event >= first && x.id.event - first < events)
            << who << ": event " << x.id.event << " outside the job";
        break;
      }
      case K::event_end: {
        auto it = open.find(l);
        EXPECT_TRUE(it != open.end()) << who << ": event " << x.id.event << " ends outside its lumi";
        if (it != open.end()) ++it->second.second;
        break;
      }
      default: ADD_FAILURE() << who << ": job transition inside the job";
    }
  }
  EXPECT_FALSE(run_open) << who;
  if (every_event) {
    EXPECT_EQ(seen.size(), events) << who;
  }
  return lumis;
}

fw::run_options lumi_options(std::uint64_t events, std::uint64_t per_run, std::uint64_t per_lumi, unsigned lumis,
                             std::uint64_t in_flight) {
  fw::run_options o;
  o.threads = 2;
  o.events = events;
  o.events_per_run = per_run;
  o.events_per_lumi = per_lumi;
  o.concurrent_lumis = lumis;
  o.events_in_flight = in_flight;
  return o;
}

// The lumis a job of these sizes (of events [first, first + events)) has, in order.
std::vector<lumi_id> all_lumis(std::uint64_t events, std::uint64_t per_run, std::uint64_t per_lumi,
                               std::uint64_t first = 0) {
  std::vector<lumi_id> v;
  for (std::uint64_t e = first; e < first + events; ++e)
    if (v.empty() || v.back() != expected_lumi(e, per_run, per_lumi)) v.push_back(expected_lumi(e, per_run, per_lumi));
  return v;
}

TEST(Lumi, TransitionsInOrderAndEventsInTheirLumi) {
  heddle_test::watchdog dog("Lumi.TransitionsInOrderAndEventsInTheirLumi", std::chrono::seconds(120));
  struct sizes {
    std::uint64_t events, per_run, per_lumi;
  };
  // Even lumis; a run that is not a multiple of its lumis; lumis larger than runs; one lumi per
  // run; a job that ends inside a lumi; lumis of one and two events (a lumi boundary at nearly
  // every event: the source's decisions at their busiest).
  for (const sizes s : {sizes{60, 20, 5}, sizes{61, 23, 7}, sizes{40, 10, 25}, sizes{30, 10, 0}, sizes{47, 0, 6},
                        sizes{300, 100, 1}, sizes{301, 0, 2}}) {
    for (unsigned lumis : {1u, 2u, 3u}) {
      for (int threaded = 0; threaded < 2; ++threaded) {
        auto j = std::make_shared<journal>();
        fw::process p("lumi_order");
        p.add<watcher>(spec("watch"), j, s.per_run, s.per_lumi);
        p.add_path("p", {"watch"});
        const fw::run_options o = lumi_options(s.events, s.per_run, s.per_lumi, lumis, 8);
        const fw::run_report r = threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o);
        SCOPED_TRACE(std::to_string(s.events) + " events, runs of " + std::to_string(s.per_run) + ", lumis of " +
                     std::to_string(s.per_lumi) + ", " + std::to_string(lumis) + " lumis, " +
                     (threaded ? "threaded" : "single"));
        EXPECT_EQ(r.events, s.events);
        EXPECT_EQ(r.concurrent_lumis, threaded ? lumis : 1u);
        const auto seen = check_sequence(j->entries(), "watch", 0, s.events, s.per_run, s.per_lumi, r.concurrent_lumis,
                                         true);
        EXPECT_EQ(seen, all_lumis(s.events, s.per_run, s.per_lumi));
        std::uint32_t counted = 0;
        for (const auto& run : r.runs) counted += run.lumis;
        EXPECT_EQ(counted, seen.size());
      }
    }
  }
}

TEST(Lumi, EveryStreamInstanceSeesEveryLumiAndLimitsConcurrentLumisToOne) {
  heddle_test::watchdog dog("Lumi.EveryStreamInstance", std::chrono::seconds(120));
  const std::uint64_t events = 90, per_run = 30, per_lumi = 4, in_flight = 6;
  auto j = std::make_shared<journal>();
  auto instances = std::make_shared<std::atomic<int>>(0);
  fw::process p("lumi_streams");
  p.add<watcher>(spec("watch"), j, per_run, per_lumi);
  p.add<stream_watcher>(spec("per_stream"), j, instances);
  p.add_path("p", {"watch", "per_stream"});
  const fw::run_report r = fw::run_threaded(p, lumi_options(events, per_run, per_lumi, 3, in_flight));
  EXPECT_EQ(r.concurrent_lumis, 1u);  // CMS's rule: a stream module in the process
  EXPECT_EQ(r.lumis_limited_by, "per_stream");
  EXPECT_EQ(instances->load(), static_cast<int>(in_flight));
  const auto expected = all_lumis(events, per_run, per_lumi);
  EXPECT_EQ(check_sequence(j->entries(), "watch", 0, events, per_run, per_lumi, 1, true), expected);
  // Each instance sees every lumi's transitions, whether or not it ran one of its events; the
  // instances' events together are every event.
  std::set<std::uint64_t> events_seen;
  for (int i = 0; i < instances->load(); ++i) {
    EXPECT_EQ(check_sequence(j->entries(), "per_stream", i, events, per_run, per_lumi, 1, false), expected)
        << "instance " << i;
    for (const auto& x : j->entries())
      if (x.module == "per_stream" && x.instance == i && x.what == K::event_start) events_seen.insert(x.id.event);
  }
  EXPECT_EQ(events_seen.size(), events);
}

TEST(Lumi, OneModuleLimitsConcurrentLumisToOne) {
  auto j = std::make_shared<journal>();
  fw::process p("lumi_one");
  p.add<watcher>(spec("watch"), j, 20, 3);
  p.add<serial_watcher>(spec("serial"));
  p.add_path("p", {"watch", "serial"});
  const fw::run_report r = fw::run_threaded(p, lumi_options(40, 20, 3, 4, 8));
  EXPECT_EQ(r.concurrent_lumis, 1u);
  EXPECT_EQ(r.lumis_limited_by, "serial");
  check_sequence(j->entries(), "watch", 0, 40, 20, 3, 1, true);
}

// --- per-lumi summaries: state kept per lumi by a global module, made into lumi products.

struct lumi_stats {
  std::atomic<long> overlapping_events{0};  // events that ran while the lumi before theirs was open
  std::atomic<unsigned> open{0}, most_open{0};
};

// Sums the event numbers of each lumi, keyed by lumi under a lock (its lumi transitions may run
// beside events of other lumis), and makes the sums luminosity-block products at the lumi's end.
class summer final : public fw::global::EDProducer<> {
 public:
  summer(std::shared_ptr<lumi_stats> stats, std::uint64_t offset) : stats_(std::move(stats)), offset_(offset) {
    doubled_ = produces<std::uint64_t>();
    ids_ = produces<std::vector<std::uint64_t>>("ids");
    sum_ = produces<std::vector<std::uint64_t>>("sum", fw::transition::end_luminosity_block);
    count_ = produces<std::uint64_t>("count", fw::transition::end_luminosity_block);
  }
  void produce(fw::event& e, const fw::event_setup&) const override {
    {
      std::lock_guard lock(m_);
      const lumi_id l{e.id().run, e.id().lumi};
      acc& a = open_.at(l);  // begun: begin_luminosity_block made the entry
      a.sum += e.id().event;
      ++a.count;
      if (l.lumi > 1 && open_.count({l.run, l.lumi - 1})) stats_->overlapping_events.fetch_add(1);
    }
    e.emplace(doubled_, 2 * e.id().event);
    e.emplace(ids_, std::vector<std::uint64_t>{e.id().event, e.id().lumi});  // on the heap
  }
  void begin_luminosity_block(const fw::luminosity_block& l, const fw::event_setup&) override {
    {
      std::lock_guard lock(m_);
      open_.emplace(l.id(), acc{});
    }
    const unsigned now = stats_->open.fetch_add(1) + 1;
    unsigned most = stats_->most_open.load();
    while (now > most && !stats_->most_open.compare_exchange_weak(most, now)) {
    }
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    acc a;
    {
      std::lock_guard lock(m_);
      a = open_.at(l.id());
      open_.erase(l.id());
    }
    stats_->open.fetch_sub(1);
    l.put(sum_, std::vector<std::uint64_t>{a.sum + offset_, a.count});
    l.emplace(count_, a.count);
  }

 private:
  struct acc {
    std::uint64_t sum = 0, count = 0;
  };
  std::shared_ptr<lumi_stats> stats_;
  std::uint64_t offset_;
  mutable std::mutex m_;
  mutable std::map<lumi_id, acc> open_;
  fw::put_token<std::uint64_t> doubled_;
  fw::put_token<std::vector<std::uint64_t>> ids_, sum_;
  fw::put_token<std::uint64_t> count_;
};

struct summary {
  std::uint64_t sum, count, count_product;
  friend bool operator==(const summary&, const summary&) = default;
};
using summaries = std::map<lumi_id, summary>;

// Reads the summer's lumi products in its own end_luminosity_block (it is added first: the
// framework must still run it after the summer), and its event products in events.
class summary_reader final : public fw::global::EDAnalyzer<> {
 public:
  explicit summary_reader(std::shared_ptr<summaries> out) : out_(std::move(out)) {
    sum_ = consumes<std::vector<std::uint64_t>>({"summer", "sum"}, fw::in_lumi);
    count_ = consumes<std::uint64_t>(fw::input_tag("summer", "count"), fw::in_lumi);
    ids_ = consumes<std::vector<std::uint64_t>>({"summer", "ids"});
  }
  void analyze(const fw::event& e, const fw::event_setup&) const override {
    if (e.get(ids_) != std::vector<std::uint64_t>{e.id().event, e.id().lumi})
      throw std::logic_error("wrong ids product");
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    const std::vector<std::uint64_t>& s = l.get(sum_);
    (*out_)[l.id()] = {s.at(0), s.at(1), l.get(count_)};
  }

 private:
  std::shared_ptr<summaries> out_;
  fw::get_token<std::vector<std::uint64_t>> sum_, ids_;
  fw::get_token<std::uint64_t> count_;
};

struct summary_run {
  summaries seen;
  fw::run_report report;
  long overlapping_events;
  unsigned most_open;
};

summary_run run_summaries(const fw::run_options& o, bool threaded, std::uint64_t offset = 0) {
  auto stats = std::make_shared<lumi_stats>();
  auto seen = std::make_shared<summaries>();
  fw::process p("lumi_summaries");
  p.add<summary_reader>(spec("reader"), seen);
  p.add<summer>(spec("summer"), stats, offset);
  p.add_path("p", {"summer", "reader"});
  summary_run r;
  r.report = threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o);
  r.seen = *seen;
  r.overlapping_events = stats->overlapping_events.load();
  r.most_open = stats->most_open.load();
  return r;
}

TEST(Lumi, PerLumiSummariesMatchTheSerialRunWithConcurrentLumis) {
  heddle_test::watchdog dog("Lumi.PerLumiSummaries", std::chrono::seconds(300));
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(6000, 900), per_run = 500, per_lumi = 7;
  // The answer, worked out here.
  summaries expected;
  for (std::uint64_t e = 0; e < events; ++e) {
    summary& s = expected[expected_lumi(e, per_run, per_lumi)];
    s.sum += e;
    ++s.count;
    s.count_product = s.count;
  }
  const summary_run serial = run_summaries(lumi_options(events, per_run, per_lumi, 1, 1), false);
  EXPECT_EQ(serial.seen, expected);
  EXPECT_EQ(serial.overlapping_events, 0);
  for (unsigned lumis : {1u, 2u, 3u}) {
    for (std::uint64_t in_flight : {std::uint64_t{4}, std::uint64_t{64}}) {
      for (int rep = 0; rep < 3; ++rep) {
        const summary_run r = run_summaries(lumi_options(events, per_run, per_lumi, lumis, in_flight), true);
        SCOPED_TRACE(std::to_string(lumis) + " lumis, " + std::to_string(in_flight) + " in flight");
        EXPECT_EQ(r.report.events, events);
        EXPECT_EQ(r.seen, expected);
        EXPECT_EQ(r.report.checksum, serial.report.checksum);
        ASSERT_EQ(r.report.runs.size(), serial.report.runs.size());
        for (std::size_t i = 0; i < r.report.runs.size(); ++i) {
          EXPECT_EQ(r.report.runs[i].checksum, serial.report.runs[i].checksum);
          EXPECT_EQ(r.report.runs[i].lumis, serial.report.runs[i].lumis);
        }
        EXPECT_LE(r.most_open, lumis);
        // One lumi at a time is a barrier: no event of a lumi runs before the one before it ended.
        if (lumis == 1) {
          EXPECT_EQ(r.overlapping_events, 0);
        }
        if (rep == 0)
          std::printf(
              "[ lumis %u, in flight %3llu ] events overlapping the previous lumi's end: %ld, lumis open at most: %u\n",
              lumis, static_cast<unsigned long long>(in_flight), r.overlapping_events, r.most_open);
      }
    }
  }
}

TEST(Lumi, LumiProductsCountInTheChecksum) {
  const fw::run_options o = lumi_options(200, 50, 10, 2, 16);
  const summary_run a = run_summaries(o, true, 0), b = run_summaries(o, true, 1), a1 = run_summaries(o, false, 0);
  EXPECT_EQ(a.report.checksum, a1.report.checksum);
  EXPECT_NE(a.report.checksum, b.report.checksum);  // only a lumi product differs
  // The same events without lumis: the events' share is the same, the lumis' is added.
  fw::run_options plain = o;
  plain.events_per_lumi = 0;
  const summary_run c = run_summaries(plain, true, 0);
  EXPECT_EQ(c.seen.size(), 4u);  // one lumi per run
  EXPECT_NE(c.report.checksum, a.report.checksum);
}

// --- jobs from a first event (run_options::first_event).

// A job of events [first, N) has the runs and lumis, and each event the ids, of a job of [0, N)
// restricted to them: the run and lumi it starts inside are begun with their ids (not 1:1), and
// the lumi boundaries after it are the whole job's. Starts inside a lumi, at a lumi boundary inside
// a run, at a run boundary, at the last event; lumis larger than runs; one run.
TEST(Lumi, AJobFromAFirstEventHasTheWholeJobsRunsAndLumis) {
  heddle_test::watchdog dog("Lumi.AJobFromAFirstEvent", std::chrono::seconds(120));
  struct sizes {
    std::uint64_t n, per_run, per_lumi;
    std::vector<std::uint64_t> firsts;
  };
  for (const sizes& s :
       {sizes{61, 23, 7, {5, 7, 23, 30, 40, 60}}, sizes{40, 10, 25, {15}}, sizes{47, 0, 6, {10, 12}}}) {
    for (const std::uint64_t first : s.firsts) {
      for (unsigned lumis : {1u, 2u}) {
        for (int threaded = 0; threaded < 2; ++threaded) {
          const std::uint64_t events = s.n - first;
          auto j = std::make_shared<journal>();
          fw::process p("lumi_first_event");
          p.add<watcher>(spec("watch"), j, s.per_run, s.per_lumi);
          p.add_path("p", {"watch"});
          fw::run_options o = lumi_options(events, s.per_run, s.per_lumi, lumis, 8);
          o.first_event = first;
          const fw::run_report r = threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o);
          SCOPED_TRACE("events " + std::to_string(first) + " to " + std::to_string(s.n - 1) + ", runs of " +
                       std::to_string(s.per_run) + ", lumis of " + std::to_string(s.per_lumi) + ", " +
                       std::to_string(lumis) + " lumis, " + (threaded ? "threaded" : "single"));
          EXPECT_EQ(r.events, events);
          const auto seen = check_sequence(j->entries(), "watch", 0, events, s.per_run, s.per_lumi, r.concurrent_lumis,
                                           true, first);
          EXPECT_EQ(seen, all_lumis(events, s.per_run, s.per_lumi, first));
          // The report's runs: the whole job's from the first event's, each with its events in the job.
          std::vector<std::pair<std::uint32_t, std::uint64_t>> runs, expected;
          for (const auto& run : r.runs) runs.push_back({run.run, run.events});
          for (std::uint64_t e = first; e < s.n; ++e) {
            const std::uint32_t run = expected_lumi(e, s.per_run, s.per_lumi).run;
            if (expected.empty() || expected.back().first != run) expected.push_back({run, 0});
            ++expected.back().second;
          }
          EXPECT_EQ(runs, expected);
        }
      }
    }
  }
}

// Two jobs splitting [0, N) at K against the whole, on both processors. The events' checksum
// shares add up wherever K lies. The lumi products (the summer's per-lumi sums) do where K is a
// lumi boundary; where K splits a lumi, each part begins that lumi and makes its products from
// its own events, the two sums adding up to the whole lumi's, so that the checksums do not add up.
TEST(Lumi, JobsSplittingAJobAddUpToItWhereNoLumiIsSplit) {
  heddle_test::watchdog dog("Lumi.JobsSplittingAJob", std::chrono::seconds(120));
  const std::uint64_t n = 200;
  for (int threaded = 0; threaded < 2; ++threaded) {
    const summary_run whole = run_summaries(lumi_options(n, 50, 10, 2, 16), threaded);
    ASSERT_EQ(whole.report.events, n);
    for (const std::uint64_t k : {120u, 125u}) {  // lumi 3:3 is [120, 130)
      SCOPED_TRACE("split at " + std::to_string(k) + (threaded ? ", threaded" : ", single-threaded"));
      fw::run_options first = lumi_options(k, 50, 10, 2, 16), second = lumi_options(n - k, 50, 10, 2, 16);
      second.first_event = k;
      const summary_run a = run_summaries(first, threaded), b = run_summaries(second, threaded);
      EXPECT_EQ(a.report.events + b.report.events, n);
      EXPECT_EQ(a.report.events_checksum + b.report.events_checksum, whole.report.events_checksum);
      summaries joined = a.seen;
      for (const auto& [lumi, x] : b.seen) {
        auto [it, added] = joined.emplace(lumi, x);
        EXPECT_EQ(added, k % 10 == 0 || lumi != (lumi_id{3, 3})) << "lumi " << lumi.run << ":" << lumi.lumi;
        if (!added)
          it->second = {it->second.sum + x.sum, it->second.count + x.count, it->second.count_product + x.count_product};
      }
      EXPECT_EQ(joined, whole.seen);
      if (k % 10 == 0) {
        EXPECT_EQ(a.report.checksum + b.report.checksum, whole.report.checksum);
      } else {
        EXPECT_NE(a.report.checksum + b.report.checksum, whole.report.checksum);
      }
    }
  }
}

// --- exceptions in lumi transitions.

class lumi_thrower final : public fw::global::EDAnalyzer<> {
 public:
  lumi_thrower(bool at_begin, lumi_id when) : at_begin_(at_begin), when_(when) {}
  void analyze(const fw::event&, const fw::event_setup&) const override {}
  void begin_luminosity_block(const fw::luminosity_block& l, const fw::event_setup&) override {
    if (at_begin_ && l.id() == when_) throw std::runtime_error("no luminosity here");
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    if (!at_begin_ && l.id() == when_) throw std::runtime_error("no luminosity here");
  }

 private:
  bool at_begin_;
  lumi_id when_;
};

TEST(Lumi, ExceptionsInLumiTransitionsStopTheJobNamingModuleAndTransition) {
  heddle_test::watchdog dog("Lumi.Exceptions", std::chrono::seconds(120));
  const std::uint64_t events = 60, per_run = 30, per_lumi = 5;
  for (int at_begin = 0; at_begin < 2; ++at_begin) {
    for (unsigned lumis : {1u, 3u}) {
      for (int threaded = 0; threaded < 2; ++threaded) {
        SCOPED_TRACE(std::string(at_begin ? "begin" : "end") + ", " + std::to_string(lumis) + " lumis, " +
                     (threaded ? "threaded" : "single"));
        auto j = std::make_shared<journal>();
        fw::process p("lumi_throw");
        p.add<watcher>(spec("watch"), j, per_run, per_lumi);
        p.add<lumi_thrower>(spec("thrower"), at_begin != 0, lumi_id{1, 3});
        p.add_path("p", {"watch"});
        const fw::run_options o = lumi_options(events, per_run, per_lumi, lumis, 4);
        try {
          (void)(threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o));
          ADD_FAILURE() << "no module_error";
        } catch (const fw::module_error& x) {
          EXPECT_EQ(x.label(), "thrower");
          EXPECT_EQ(x.run(), 1u);
          const std::string what = x.what();
          EXPECT_NE(what.find(at_begin ? "begin_luminosity_block (lumi 3)" : "end_luminosity_block (lumi 3)"),
                    std::string::npos)
              << what;
          EXPECT_NE(what.find("no luminosity here"), std::string::npos) << what;
        }
        if (!threaded) continue;  // the reference stops where it throws
        // The threaded processor stops cleanly: no event of a later lumi than it could have
        // started, lumis that began end, the run ends, the job ends.
        const auto entries = j->entries();
        std::uint32_t last_lumi = 0;
        std::map<lumi_id, int> begun_minus_ended;
        for (const auto& x : entries) {
          if (x.what == K::event_start) last_lumi = std::max(last_lumi, x.id.lumi);
          if (x.what == K::begin_lumi) ++begun_minus_ended[{x.id.run, x.id.lumi}];
          if (x.what == K::end_lumi) --begun_minus_ended[{x.id.run, x.id.lumi}];
        }
        // Begin failing for lumi 3: its events never start. End failing for lumi 3: with one lumi
        // at a time, lumi 4 never begins.
        if (at_begin) {
          EXPECT_LT(last_lumi, 3u);
        } else if (lumis == 1) {
          EXPECT_LE(last_lumi, 3u);
        }
        // A lumi whose begin failed is not ended (as a run whose begin failed): the watcher, added
        // before the thrower, began lumi 3 and gets no end for it. Every other lumi that began ended.
        for (const auto& [l, n] : begun_minus_ended)
          EXPECT_EQ(n, (at_begin && l == lumi_id{1, 3}) ? 1 : 0) << "lumi " << l.lumi;
        EXPECT_EQ(begun_minus_ended.count({1, 3}), 1u);
        ASSERT_FALSE(entries.empty());
        EXPECT_EQ(entries.back().what, K::end_job);
        EXPECT_EQ(std::count_if(entries.begin(), entries.end(), [](const auto& x) { return x.what == K::end_run; }), 1);
      }
    }
  }
}

class event_thrower final : public fw::global::EDProducer<> {
 public:
  void produce(fw::event& e, const fw::event_setup&) const override {
    if (e.id().event == 17) throw std::runtime_error("bad event");
  }
};

TEST(Lumi, AnEventFailureWithConcurrentLumisEndsWhatBegan) {
  heddle_test::watchdog dog("Lumi.AnEventFailure", std::chrono::seconds(120));
  for (unsigned lumis : {1u, 2u, 3u}) {
    for (std::uint64_t in_flight : {std::uint64_t{1}, std::uint64_t{4}, std::uint64_t{32}}) {
      SCOPED_TRACE(std::to_string(lumis) + " lumis, " + std::to_string(in_flight) + " in flight");
      auto j = std::make_shared<journal>();
      fw::process p("event_throw");
      p.add<watcher>(spec("watch"), j, 0, 3);
      p.add<event_thrower>(spec("thrower"));
      p.add_path("p", {"thrower", "watch"});
      try {
        (void)fw::run_threaded(p, lumi_options(200, 0, 3, lumis, in_flight));
        ADD_FAILURE() << "no module_error";
      } catch (const fw::module_error& x) {
        EXPECT_EQ(x.label(), "thrower");
        EXPECT_EQ(x.event(), 17u);
      }
      // Every lumi that began ended, after its events; the run and the job ended.
      const auto entries = j->entries();
      std::uint64_t events = 0;
      for (const auto& x : entries) events += x.what == K::event_end;
      const auto seen = check_sequence(entries, "watch", 0, 200, 0, 3, lumis, false);
      EXPECT_FALSE(seen.empty());
      EXPECT_LT(events, 200u);
      ASSERT_FALSE(entries.empty());
      EXPECT_EQ(entries.back().what, K::end_job);
    }
  }
}

// --- misuse: checked at finalize(), at declaration, and at the call.

using fw_test::event_maker;
using fw_test::lumi_maker;

// Reads "label:n" from where `where` says, in its events (from the event) or at the end of lumis.
class n_reader final : public fw::global::EDAnalyzer<> {
 public:
  n_reader(std::string label, fw::branch_type where) : where_(where) {
    token_ = consumes<std::uint64_t>({label, "n"}, where);
  }
  void analyze(const fw::event& e, const fw::event_setup&) const override {
    if (where_ == fw::in_lumi) (void)e.get(token_);  // misuse: a lumi token on the event
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    if (where_ == fw::in_lumi) (void)l.get(token_);
  }

 private:
  fw::branch_type where_;
  fw::get_token<std::uint64_t> token_;
};

std::string finalize_error(fw::process& p) {
  try {
    p.finalize();
  } catch (const fw::config_error& x) {
    return x.what();
  }
  return "";
}

TEST(Lumi, FinalizeChecksLumiConsumesAgainstLumiProduces) {
  {  // in_lumi of an event product: names both modules and says where the product is made
    fw::process p("mismatch");
    p.add<event_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_lumi);
    const std::string e = finalize_error(p);
    EXPECT_NE(e.find("'reader'"), std::string::npos) << e;
    EXPECT_NE(e.find("'maker' makes no"), std::string::npos) << e;
    EXPECT_NE(e.find("in_lumi"), std::string::npos) << e;
  }
  {  // from the event, a lumi product
    fw::process p("mismatch");
    p.add<lumi_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_event);
    const std::string e = finalize_error(p);
    EXPECT_NE(e.find("'reader'"), std::string::npos) << e;
    EXPECT_NE(e.find("'maker:n' at end_luminosity_block"), std::string::npos) << e;
  }
  {  // unknown label
    fw::process p("unknown");
    p.add<n_reader>(spec("reader"), "nobody", fw::in_lumi);
    EXPECT_NE(finalize_error(p).find("unknown label 'nobody'"), std::string::npos);
  }
  {  // right: finalizes
    fw::process p("right");
    p.add<n_reader>(spec("reader"), "maker", fw::in_lumi);
    p.add<lumi_maker>(spec("maker"));
    EXPECT_EQ(finalize_error(p), "");
  }
}

// Makes "self:n" at the end of lumis from "other:n" (read in_lumi).
class lumi_relay final : public fw::global::EDProducer<> {
 public:
  explicit lumi_relay(const std::string& other) {
    in_ = consumes<std::uint64_t>({other, "n"}, fw::in_lumi);
    out_ = produces<std::uint64_t>("n", fw::transition::end_luminosity_block);
  }
  void produce(fw::event&, const fw::event_setup&) const override {}
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    l.emplace(out_, l.get(in_) + 1);
  }

 private:
  fw::get_token<std::uint64_t> in_;
  fw::put_token<std::uint64_t> out_;
};

TEST(Lumi, EndLumiRunsMakersFirstAndRefusesCycles) {
  {  // a chain added backwards: c reads b reads a; each end_luminosity_block sees its input
    fw::process p("chain");
    p.add<lumi_relay>(spec("c"), "b");
    p.add<lumi_relay>(spec("b"), "a");
    p.add<lumi_maker>(spec("a"));
    const fw::run_options o = lumi_options(20, 0, 5, 2, 4);
    EXPECT_EQ(fw::run_threaded(p, o).checksum, fw::run_single_threaded(p, o).checksum);
  }
  {
    fw::process p("cycle");
    p.add<lumi_relay>(spec("x"), "y");
    p.add<lumi_relay>(spec("y"), "x");
    const std::string e = finalize_error(p);
    EXPECT_NE(e.find("luminosity-block products form a cycle"), std::string::npos) << e;
    EXPECT_NE(e.find("'x'"), std::string::npos) << e;
    EXPECT_NE(e.find("'y'"), std::string::npos) << e;
  }
}

class stream_lumi_maker final : public fw::stream::EDProducer<> {
 public:
  stream_lumi_maker() { (void)produces<std::uint64_t>("n", fw::transition::end_luminosity_block); }
  void produce(fw::event&, const fw::event_setup&) override {}
};

TEST(Lumi, MisusedLumiProductsFailClearly) {
  {  // a stream module cannot make a lumi product: refused where it declares it
    fw::process p("stream");
    EXPECT_THROW(p.add<stream_lumi_maker>(spec("s")), std::logic_error);
  }
  {  // a lumi token read on the event: the module fails naming itself
    fw::process p("token");
    p.add<lumi_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_lumi);
    p.add_path("p", {"reader"});
    for (int threaded = 0; threaded < 2; ++threaded) {
      try {
        (void)(threaded ? fw::run_threaded(p, lumi_options(10, 0, 5, 1, 2))
                        : fw::run_single_threaded(p, lumi_options(10, 0, 5, 1, 2)));
        ADD_FAILURE() << "no module_error";
      } catch (const fw::module_error& x) {
        EXPECT_EQ(x.label(), "reader");
        EXPECT_NE(std::string(x.what()).find("luminosity-block product"), std::string::npos) << x.what();
      }
    }
  }
  {  // a lumi product made in begin_luminosity_block
    fw::process p("early");
    p.add<lumi_maker>(spec("maker"), true);
    try {
      (void)fw::run_threaded(p, lumi_options(10, 0, 5, 1, 2));
      ADD_FAILURE() << "no module_error";
    } catch (const fw::module_error& x) {
      EXPECT_EQ(x.label(), "maker");
      EXPECT_NE(std::string(x.what()).find("begin_luminosity_block"), std::string::npos) << x.what();
    }
  }
}

// --- the configuration's keys.

std::string config_text(const std::string& options, const std::string& source) {
  return R"({"process": {"options": {"nSimultaneousEvents": 2, "busyWaitScaleFactor": 1e7)" + options +
         R"(}, "source": {"iterations": 100)" + source + R"(}, "producers": [], "paths": {}}})";
}

std::string parse_error(const std::string& options, const std::string& source) {
  try {
    (void)fw::parse_config(config_text(options, source), "lumis.json");
  } catch (const fw::config_error& x) {
    return x.what();
  }
  return "";
}

TEST(Lumi, ConfigurationKeys) {
  {
    const fw::process_config c = fw::parse_config(config_text("", ""), "lumis.json");
    EXPECT_EQ(c.events_per_lumi, 0u);
    EXPECT_EQ(c.events_per_run, 0u);
    EXPECT_EQ(c.concurrent_lumis, 1u);
  }
  {
    const fw::process_config c = fw::parse_config(config_text(R"(, "numberOfConcurrentLuminosityBlocks": 3)",
                                                              R"(, "eventsPerLumi": 5, "lumisPerRun": "4")"),
                                                  "lumis.json");
    EXPECT_EQ(c.events_per_lumi, 5u);
    EXPECT_EQ(c.events_per_run, 20u);
    EXPECT_EQ(c.concurrent_lumis, 3u);
  }
  {
    const fw::process_config c = fw::parse_config(config_text("", R"(, "eventsPerLumi": 5, "eventsPerRun": 12)"),
                                                  "lumis.json");
    EXPECT_EQ(c.events_per_lumi, 5u);
    EXPECT_EQ(c.events_per_run, 12u);
  }
  std::string e = parse_error("", R"(, "lumisPerRun": 4)");
  EXPECT_NE(e.find("lumis.json: process.source.lumisPerRun: needs eventsPerLumi"), std::string::npos) << e;
  e = parse_error("", R"(, "eventsPerLumi": 5, "lumisPerRun": 4, "eventsPerRun": 20)");
  EXPECT_NE(e.find("process.source.lumisPerRun: give eventsPerRun or lumisPerRun, not both"), std::string::npos) << e;
  e = parse_error("", R"(, "eventsPerLumi": 0)");
  EXPECT_NE(e.find("process.source.eventsPerLumi: expected at least 1"), std::string::npos) << e;
  e = parse_error("", R"(, "eventsPerLumi": 4294967296, "lumisPerRun": 4294967296)");
  EXPECT_NE(e.find("process.source.lumisPerRun: eventsPerLumi x lumisPerRun is too large"), std::string::npos) << e;
  e = parse_error(R"(, "numberOfConcurrentLuminosityBlocks": 0)", "");
  EXPECT_NE(e.find("process.options.numberOfConcurrentLuminosityBlocks: expected at least 1"), std::string::npos) << e;
  e = parse_error(R"(, "numberOfConcurrentLuminosityBlocks": "two")", "");
  EXPECT_NE(e.find("process.options.numberOfConcurrentLuminosityBlocks: expected a count"), std::string::npos) << e;
  e = parse_error("", R"(, "lumisPerRum": 4)");
  EXPECT_NE(e.find("unknown key 'lumisPerRum'"), std::string::npos) << e;
}

}  // namespace

}  // namespace lumi_test
