// SPDX-License-Identifier: Apache-2.0
// Run products (produces<T>(instance, transition::end_run), consumes<T>(tag, in_run), run::get /
// emplace / put in end_run): a per-run summary made by a global module at end_run and read by
// others in their end_run (added before it: the framework must order them), equal to the answer
// worked out here and to the single-threaded run with 1..3 concurrent lumis and 1, 4, 64 events in
// flight; run products in their own run's checksum; the checks at finalize(), at declaration and at
// the call; exceptions in end_run with run products made.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <heddle/fw.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "fw_test_support.hpp"

namespace run_products_test {
namespace {

namespace fw = heddle::fw;

fw::module_spec spec(const std::string& label) { return {label, "test module", "", {}}; }

fw::run_options options(std::uint64_t events, std::uint64_t per_run, std::uint64_t per_lumi, unsigned lumis,
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

// --- a per-run summary.

// Sums the event numbers of each run (events of a run run concurrently: under a lock, keyed by
// run), makes each lumi's event count a lumi product, and the run's sum and count run products at
// end_run (the sum plus `offset` in run `offset_run`, to change one run's product only).
class run_summer final : public fw::global::EDProducer<> {
 public:
  run_summer(std::uint32_t offset_run, std::uint64_t offset) : offset_run_(offset_run), offset_(offset) {
    lumi_count_ = produces<std::uint64_t>("lumi_count", fw::transition::end_luminosity_block);
    sum_ = produces<std::vector<std::uint64_t>>("sum", fw::transition::end_run);  // on the heap
    count_ = produces<std::uint64_t>("count", fw::transition::end_run);
  }
  void produce(fw::event& e, const fw::event_setup&) const override {
    std::lock_guard lock(m_);
    acc& r = runs_.at(e.id().run);  // begin_run made the entry
    r.sum += e.id().event;
    ++r.count;
    ++lumis_.at({e.id().run, e.id().lumi});
  }
  void begin_run(const fw::run& r, const fw::event_setup&) override {
    std::lock_guard lock(m_);
    runs_.emplace(r.number(), acc{});
  }
  void begin_luminosity_block(const fw::luminosity_block& l, const fw::event_setup&) override {
    std::lock_guard lock(m_);
    lumis_.emplace(l.id(), 0);
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    std::uint64_t n;
    {
      std::lock_guard lock(m_);
      n = lumis_.at(l.id());
      lumis_.erase(l.id());
    }
    l.emplace(lumi_count_, n);
  }
  void end_run(fw::run& r, const fw::event_setup&) override {
    acc a;
    {
      std::lock_guard lock(m_);
      a = runs_.at(r.number());
      runs_.erase(r.number());
    }
    r.put(sum_, std::vector<std::uint64_t>{a.sum + (r.number() == offset_run_ ? offset_ : 0), a.count});
    r.emplace(count_, a.count);
  }

 private:
  struct acc {
    std::uint64_t sum = 0, count = 0;
  };
  std::uint32_t offset_run_;
  std::uint64_t offset_;
  mutable std::mutex m_;
  mutable std::map<std::uint32_t, acc> runs_;
  mutable std::map<fw::luminosity_block_id, std::uint64_t> lumis_;
  fw::put_token<std::uint64_t> lumi_count_;
  fw::put_token<std::vector<std::uint64_t>> sum_;
  fw::put_token<std::uint64_t> count_;
};

// Makes "self:n" at end_run from `label`'s "count" run product, plus one.
class run_relay final : public fw::global::EDProducer<> {
 public:
  explicit run_relay(const std::string& label, const std::string& instance = "count") {
    in_ = consumes<std::uint64_t>({label, instance}, fw::in_run);
    out_ = produces<std::uint64_t>("n", fw::transition::end_run);
  }
  void produce(fw::event&, const fw::event_setup&) const override {}
  void end_run(fw::run& r, const fw::event_setup&) override { r.emplace(out_, r.get(in_) + 1); }

 private:
  fw::get_token<std::uint64_t> in_;
  fw::put_token<std::uint64_t> out_;
};

struct summary {
  std::uint64_t sum = 0, count = 0, count_product = 0, relayed = 0, lumi_counts = 0, lumis = 0;
  friend bool operator==(const summary&, const summary&) = default;
};
using summaries = std::map<std::uint32_t, summary>;

// Reads the summer's lumi products at the end of each lumi (adding them up per run, lumis of a run
// may end beside one another's events but never beside each other), and its run products and the
// relay's at end_run.
class run_reader final : public fw::global::EDAnalyzer<> {
 public:
  explicit run_reader(std::shared_ptr<summaries> out) : out_(std::move(out)) {
    sum_ = consumes<std::vector<std::uint64_t>>({"summer", "sum"}, fw::in_run);
    count_ = consumes<std::uint64_t>(fw::input_tag("summer", "count"), fw::in_run);
    relayed_ = consumes<std::uint64_t>({"relay", "n"}, fw::in_run);
    lumi_count_ = consumes<std::uint64_t>({"summer", "lumi_count"}, fw::in_lumi);
  }
  void analyze(const fw::event&, const fw::event_setup&) const override {}
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    summary& s = (*out_)[l.run()];
    s.lumi_counts += l.get(lumi_count_);
    ++s.lumis;
  }
  void end_run(fw::run& r, const fw::event_setup&) override {
    summary& s = (*out_)[r.number()];
    const std::vector<std::uint64_t>& v = r.get(sum_);
    s.sum = v.at(0);
    s.count = v.at(1);
    s.count_product = r.get(count_);
    s.relayed = r.get(relayed_);
  }

 private:
  std::shared_ptr<summaries> out_;
  fw::get_token<std::vector<std::uint64_t>> sum_;
  fw::get_token<std::uint64_t> count_, relayed_, lumi_count_;
};

struct summary_run {
  summaries seen;
  fw::run_report report;
};

// The reader first, then the relay, then the summer: end_run must run them the other way round.
summary_run run_summaries(const fw::run_options& o, bool threaded, std::uint32_t offset_run = 0,
                          std::uint64_t offset = 0) {
  auto seen = std::make_shared<summaries>();
  fw::process p("run_summaries");
  p.add<run_reader>(spec("reader"), seen);
  p.add<run_relay>(spec("relay"), "summer");
  p.add<run_summer>(spec("summer"), offset_run, offset);
  p.add_path("p", {"summer", "reader"});
  summary_run r;
  r.report = threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o);
  r.seen = *seen;
  return r;
}

TEST(RunProducts, PerRunSummariesMatchTheAnswerAndTheSerialRun) {
  heddle_test::watchdog dog("RunProducts.PerRunSummaries", std::chrono::seconds(300));
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(3000, 600), per_run = 250, per_lumi = 7;
  // The answer, worked out here.
  summaries expected;
  for (std::uint64_t e = 0; e < events; ++e) {
    summary& s = expected[static_cast<std::uint32_t>(e / per_run + 1)];
    s.sum += e;
    ++s.count;
    s.count_product = s.count;
    s.relayed = s.count + 1;
    s.lumi_counts = s.count;
    if ((e % per_run) % per_lumi == 0) ++s.lumis;
  }
  const summary_run serial = run_summaries(options(events, per_run, per_lumi, 1, 1), false);
  EXPECT_EQ(serial.seen, expected);
  ASSERT_EQ(serial.report.runs.size(), expected.size());
  for (unsigned lumis : {1u, 2u, 3u}) {
    for (std::uint64_t in_flight : {std::uint64_t{1}, std::uint64_t{4}, std::uint64_t{64}}) {
      for (int rep = 0; rep < 2; ++rep) {
        SCOPED_TRACE(std::to_string(lumis) + " lumis, " + std::to_string(in_flight) + " in flight");
        const summary_run r = run_summaries(options(events, per_run, per_lumi, lumis, in_flight), true);
        EXPECT_EQ(r.report.events, events);
        EXPECT_EQ(r.seen, expected);
        EXPECT_EQ(r.report.checksum, serial.report.checksum);
        ASSERT_EQ(r.report.runs.size(), serial.report.runs.size());
        for (std::size_t i = 0; i < r.report.runs.size(); ++i)
          EXPECT_EQ(r.report.runs[i].checksum, serial.report.runs[i].checksum);
      }
    }
  }
}

TEST(RunProducts, RunProductsCountInTheirRunsChecksum) {
  const fw::run_options o = options(200, 50, 10, 2, 16);
  const summary_run a = run_summaries(o, true), a1 = run_summaries(o, false);
  const summary_run b = run_summaries(o, true, 2, 1), b1 = run_summaries(o, false, 2, 1);  // run 2's sum differs
  EXPECT_EQ(a.report.checksum, a1.report.checksum);
  EXPECT_EQ(b.report.checksum, b1.report.checksum);
  EXPECT_NE(a.report.checksum, b.report.checksum);
  ASSERT_EQ(a.report.runs.size(), 4u);
  ASSERT_EQ(b.report.runs.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("run " + std::to_string(a.report.runs[i].run));
    if (a.report.runs[i].run == 2) {
      EXPECT_NE(a.report.runs[i].checksum, b.report.runs[i].checksum);
    } else {
      EXPECT_EQ(a.report.runs[i].checksum, b.report.runs[i].checksum);
    }
  }
}

// --- misuse: checked at finalize(), at declaration, and at the call.

using fw_test::event_maker;
using fw_test::lumi_maker;

// Makes "self:n" at end_run, or where `how` says it misbehaves.
class run_maker final : public fw::global::EDProducer<> {
 public:
  enum class how { right, at_begin, twice, not_at_all, in_lumi };
  explicit run_maker(how h = how::right) : how_(h) { token_ = produces<std::uint64_t>("n", fw::transition::end_run); }
  void produce(fw::event&, const fw::event_setup&) const override {}
  void begin_run(const fw::run& r, const fw::event_setup&) override {
    if (how_ == how::at_begin) const_cast<fw::run&>(r).emplace(token_, 1u);
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    if (how_ == how::in_lumi) l.emplace(token_, 1u);  // misuse: a run token on the lumi
  }
  void end_run(fw::run& r, const fw::event_setup&) override {
    if (how_ == how::not_at_all) return;
    r.emplace(token_, r.number());
    if (how_ == how::twice) r.emplace(token_, 2u);
  }

 private:
  how how_;
  fw::put_token<std::uint64_t> token_;
};

// Reads "label:n" from where `where` says, wherever `at` says.
class n_reader final : public fw::global::EDAnalyzer<> {
 public:
  enum class at { end_run, begin_run, event, end_lumi };
  n_reader(const std::string& label, fw::branch_type where, at when = at::end_run) : when_(when) {
    token_ = consumes<std::uint64_t>({label, "n"}, where);
  }
  void analyze(const fw::event& e, const fw::event_setup&) const override {
    if (when_ == at::event) (void)e.get(token_);
  }
  void begin_run(const fw::run& r, const fw::event_setup&) override {
    if (when_ == at::begin_run) (void)r.get(token_);
  }
  void end_luminosity_block(fw::luminosity_block& l, const fw::event_setup&) override {
    if (when_ == at::end_lumi) (void)l.get(token_);
  }
  void end_run(fw::run& r, const fw::event_setup&) override {
    if (when_ == at::end_run) got_ += r.get(token_);
  }

 private:
  at when_;
  fw::get_token<std::uint64_t> token_;
  std::uint64_t got_ = 0;
};

std::string finalize_error(fw::process& p) {
  try {
    p.finalize();
  } catch (const fw::config_error& x) {
    return x.what();
  }
  return "";
}

TEST(RunProducts, FinalizeChecksRunConsumesAgainstRunProduces) {
  {  // in_run of an event product: names both modules
    fw::process p("mismatch");
    p.add<event_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_run);
    const std::string e = finalize_error(p);
    EXPECT_NE(e.find("'reader'"), std::string::npos) << e;
    EXPECT_NE(e.find("'maker' makes no"), std::string::npos) << e;
    EXPECT_NE(e.find("in_run"), std::string::npos) << e;
  }
  {  // in_run of a lumi product: says where it is made
    fw::process p("mismatch");
    p.add<lumi_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_run);
    const std::string e = finalize_error(p);
    EXPECT_NE(e.find("'reader'"), std::string::npos) << e;
    EXPECT_NE(e.find("'maker:n' at end_luminosity_block"), std::string::npos) << e;
  }
  {  // from the event and from the lumi, a run product
    for (fw::branch_type where : {fw::in_event, fw::in_lumi}) {
      fw::process p("mismatch");
      p.add<run_maker>(spec("maker"));
      p.add<n_reader>(spec("reader"), "maker", where);
      const std::string e = finalize_error(p);
      EXPECT_NE(e.find("module 'reader'"), std::string::npos) << e;
      EXPECT_NE(e.find("'maker:n' at end_run"), std::string::npos) << e;
    }
  }
  {  // right: finalizes, and end_run runs the maker first
    fw::process p("right");
    p.add<n_reader>(spec("reader"), "maker", fw::in_run);
    p.add<run_maker>(spec("maker"));
    p.add_path("p", {"reader"});
    EXPECT_EQ(finalize_error(p), "");
    const fw::run_options o = options(30, 10, 5, 2, 4);
    EXPECT_EQ(fw::run_threaded(p, o).checksum, fw::run_single_threaded(p, o).checksum);
  }
  {  // a cycle through run products
    fw::process p("cycle");
    p.add<run_relay>(spec("x"), "y", "n");
    p.add<run_relay>(spec("y"), "x", "n");
    const std::string e = finalize_error(p);
    EXPECT_NE(e.find("run products form a cycle"), std::string::npos) << e;
    EXPECT_NE(e.find("'x'"), std::string::npos) << e;
    EXPECT_NE(e.find("'y'"), std::string::npos) << e;
  }
}

class stream_run_maker final : public fw::stream::EDProducer<> {
 public:
  stream_run_maker() { (void)produces<std::uint64_t>("n", fw::transition::end_run); }
  void produce(fw::event&, const fw::event_setup&) override {}
};

// Runs `p` with both processors; the module_error each gives must name `label` and say `says`.
void expect_failure(fw::process& p, const std::string& label, const std::string& says) {
  for (int threaded = 0; threaded < 2; ++threaded) {
    SCOPED_TRACE(threaded ? "threaded" : "single");
    const fw::run_options o = options(20, 10, 5, 1, 2);
    try {
      (void)(threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o));
      ADD_FAILURE() << "no module_error";
    } catch (const fw::module_error& x) {
      EXPECT_EQ(x.label(), label);
      EXPECT_NE(std::string(x.what()).find(says), std::string::npos) << x.what();
    }
  }
}

TEST(RunProducts, MisusedRunProductsFailClearly) {
  {  // a stream module cannot make a run product: refused where it declares it
    fw::process p("stream");
    try {
      p.add<stream_run_maker>(spec("s"));
      ADD_FAILURE() << "no logic_error";
    } catch (const std::logic_error& x) {
      EXPECT_NE(std::string(x.what()).find("cannot make a run product"), std::string::npos) << x.what();
    }
  }
  {  // a run token read on the event
    fw::process p("token");
    p.add<run_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_run, n_reader::at::event);
    p.add_path("p", {"reader"});
    expect_failure(p, "reader", "a run product (declared in_run / at end_run)");
  }
  {  // a run token read on the lumi
    fw::process p("token");
    p.add<run_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_run, n_reader::at::end_lumi);
    expect_failure(p, "reader", "luminosity_block::get: module 'reader' used the token of a run product");
  }
  {  // a run token written on the lumi
    fw::process p("token");
    p.add<run_maker>(spec("maker"), run_maker::how::in_lumi);
    expect_failure(p, "maker", "luminosity_block::put: module 'maker' used the token of a run product");
  }
  {  // a run product read in begin_run: not made yet
    fw::process p("early");
    p.add<run_maker>(spec("maker"));
    p.add<n_reader>(spec("reader"), "maker", fw::in_run, n_reader::at::begin_run);
    expect_failure(p, "reader", "did not make it there (yet: run products are made in end_run)");
  }
  {  // a run product made in begin_run
    fw::process p("early");
    p.add<run_maker>(spec("maker"), run_maker::how::at_begin);
    expect_failure(p, "maker", "in begin_run of run 1: run products are made in end_run");
  }
  {  // made twice
    fw::process p("twice");
    p.add<run_maker>(spec("maker"), run_maker::how::twice);
    expect_failure(p, "maker", "twice in run 1");
  }
  {  // not made, read
    fw::process p("missing");
    p.add<n_reader>(spec("reader"), "maker", fw::in_run);
    p.add<run_maker>(spec("maker"), run_maker::how::not_at_all);
    expect_failure(p, "reader", "in run 1, but module 'maker' did not make it there");
  }
}

// --- exceptions in end_run with run products made.

// Reads the relay's run product in end_run (so it runs after the relay, and after the reader,
// which is added before it), makes its own from it, then throws in run `when`. Tells when its
// end_job ran.
class run_thrower final : public fw::global::EDProducer<> {
 public:
  run_thrower(std::uint32_t when, std::shared_ptr<bool> job_ended) : when_(when), job_ended_(std::move(job_ended)) {
    in_ = consumes<std::uint64_t>({"relay", "n"}, fw::in_run);
    out_ = produces<std::vector<std::uint64_t>>("made", fw::transition::end_run);  // on the heap
  }
  void produce(fw::event&, const fw::event_setup&) const override {}
  void end_run(fw::run& r, const fw::event_setup&) override {
    r.put(out_, std::vector<std::uint64_t>{r.get(in_)});  // made, then the throw: it must still be destroyed
    if (r.number() == when_) throw std::runtime_error("no run here");
  }
  void end_job() override { *job_ended_ = job_failed(); }  // ended, told that the job failed

 private:
  std::uint32_t when_;
  std::shared_ptr<bool> job_ended_;
  fw::get_token<std::uint64_t> in_;
  fw::put_token<std::vector<std::uint64_t>> out_;
};

TEST(RunProducts, AnExceptionInEndRunStopsTheJobNamingModuleAndRun) {
  heddle_test::watchdog dog("RunProducts.Exceptions", std::chrono::seconds(120));
  for (unsigned lumis : {1u, 3u}) {
    for (std::uint64_t in_flight : {std::uint64_t{1}, std::uint64_t{4}, std::uint64_t{64}}) {
      for (int threaded = 0; threaded < 2; ++threaded) {
        SCOPED_TRACE(std::to_string(lumis) + " lumis, " + std::to_string(in_flight) + " in flight, " +
                     (threaded ? "threaded" : "single"));
        auto seen = std::make_shared<summaries>();
        auto job_ended = std::make_shared<bool>(false);
        fw::process p("run_throw");
        p.add<run_reader>(spec("reader"), seen);
        p.add<run_thrower>(spec("thrower"), 2, job_ended);
        p.add<run_relay>(spec("relay"), "summer");
        p.add<run_summer>(spec("summer"), 0, 0);
        p.add_path("p", {"summer", "reader"});
        const fw::run_options o = options(100, 20, 6, lumis, in_flight);
        try {
          (void)(threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o));
          ADD_FAILURE() << "no module_error";
        } catch (const fw::module_error& x) {
          EXPECT_EQ(x.label(), "thrower");
          EXPECT_EQ(x.run(), 2u);
          const std::string what = x.what();
          EXPECT_NE(what.find("end_run"), std::string::npos) << what;
          EXPECT_NE(what.find("no run here"), std::string::npos) << what;
        }
        // Runs 1 and 2 ended, the reader (before the thrower in end_run's order) saw run 2's
        // products; no later run began. Both processors end the job (end_job reaches every module
        // whose begin_job returned, module_base.hpp).
        ASSERT_EQ(seen->size(), 2u);
        EXPECT_EQ(seen->at(1).count, 20u);
        EXPECT_EQ(seen->at(2).count, 20u);
        EXPECT_EQ(seen->at(2).relayed, 21u);
        EXPECT_TRUE(*job_ended);
      }
    }
  }
}

}  // namespace

}  // namespace run_products_test
