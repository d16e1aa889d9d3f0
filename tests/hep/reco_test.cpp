// SPDX-License-Identifier: Apache-2.0
// The reconstruction job (examples/hep) run by the framework, checked against FastJet called
// directly on the job's own inputs: rho, the jets with their areas, subtraction and corrections,
// the fat jets and their trimmed masses, missing ET; the checksum the same for 1, 2 and 4 workers
// and 1 to 8 events in flight; conditions changing at a run boundary changing the corrected jets
// as the tables say; bad input named. Low pile-up and few events: seconds, not minutes.
#include <gtest/gtest.h>

#include <fastjet/ClusterSequence.hh>
#include <fastjet/ClusterSequenceArea.hh>
#include <fastjet/Selector.hh>
#include <fastjet/tools/Filter.hh>
#include <fastjet/tools/JetMedianBackgroundEstimator.hh>
#include <fastjet/tools/Subtractor.hh>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include <heddle/fw.hpp>

#include "core/jet_corrections.hpp"
#include "core/products.hpp"
#include "core/seeds.hpp"
#include "modules/fastjet_support.hpp"

namespace {

using namespace heddle::fw;

// What the test reads of each event.
struct captured {
  event_id id;
  hep::candidates particle_flow, chs;
  hep::background rho;
  hep::jets ak4;
  hep::fat_jets ak8;
  hep::missing_et met;
};

struct store {
  std::mutex lock;
  std::map<std::uint64_t, captured> events;
};

class Capture final : public global::EDAnalyzer<> {
 public:
  explicit Capture(std::shared_ptr<store> s)
      : store_(std::move(s)),
        pf_(consumes<hep::candidates>({"particleFlow"})),
        chs_(consumes<hep::candidates>({"chs"})),
        rho_(consumes<hep::background>({"rho"})),
        ak4_(consumes<hep::jets>({"ak4Jets"})),
        ak8_(consumes<hep::fat_jets>({"ak8Jets"})),
        met_(consumes<hep::missing_et>({"met"})) {}
  void analyze(const event& e, const event_setup&) const override {
    captured c{e.id(), e.get(pf_), e.get(chs_), e.get(rho_), e.get(ak4_), e.get(ak8_), e.get(met_)};
    std::lock_guard guard(store_->lock);
    store_->events.emplace(e.id().event, std::move(c));
  }

 private:
  std::shared_ptr<store> store_;
  get_token<hep::candidates> pf_, chs_;
  get_token<hep::background> rho_;
  get_token<hep::jets> ak4_;
  get_token<hep::fat_jets> ak8_;
  get_token<hep::missing_et> met_;
};

bool have_data() {
  return std::filesystem::exists(std::string(HEP_FASTJET_EXAMPLES) + "/Pythia-PtMin1000-LHC-10ev.dat");
}
#define HEP_NEEDS_DATA() \
  if (!have_data()) GTEST_SKIP() << HEP_FASTJET_EXAMPLES << " has no Pythia files: apt-get install fastjet-examples"

std::string out_dir() {
  const auto d = std::filesystem::temp_directory_path() / ("hep_reco_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

// The example's configuration at low pile-up, writing into the test's folder.
process make_job(std::shared_ptr<store> s, double mu = 5, std::vector<parameter_override> more = {},
                 std::optional<conditions> conditions_instead = std::nullopt) {
  std::vector<parameter_override> o = {{"mixing.mu", std::to_string(mu), "test"},
                                       {"output.fileName", out_dir() + "/reco.h5", "test"}};
  o.insert(o.end(), more.begin(), more.end());
  process p = make_process(load_config(HEP_RECO_CONFIG, o));
  if (s) {
    p.add<Capture>({"capture"}, s);
    p.add_end_path("capture", {"capture"});
  }
  if (conditions_instead) p.set_conditions(std::move(*conditions_instead));
  p.finalize();
  return p;
}

run_options events(std::uint64_t n, std::uint64_t per_lumi = 3, std::uint64_t per_run = 6) {
  run_options o;
  o.events = n;
  o.events_per_lumi = per_lumi;
  o.events_per_run = per_run;
  return o;
}

// The conditions file's tables, read here with nlohmann-json, and looked up here.
struct table {
  std::vector<double> eta, pt, f;
  double factor(double jet_pt, double jet_eta) const {
    auto bin = [](const std::vector<double>& e, double x) {
      std::size_t i = 0;
      while (i + 2 < e.size() && x >= e[i + 1]) ++i;
      return i;
    };
    return f[bin(eta, std::abs(jet_eta)) * (pt.size() - 1) + bin(pt, jet_pt)];
  }
};
std::vector<table> tables_of(const std::string& conditions_text) {
  const auto doc = nlohmann::json::parse(conditions_text);
  std::vector<table> out;
  for (const auto& iov : doc["records"]["hep::JetCorrectionsRecord"]) {
    const auto& p = iov["payload"];
    out.push_back({p["etaEdges"].get<std::vector<double>>(), p["ptEdges"].get<std::vector<double>>(),
                   p["factors"].get<std::vector<double>>()});
  }
  return out;
}
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fastjet::AreaDefinition area_for(std::uint64_t seed) {
  const std::vector<int> s{1 + static_cast<int>(seed % 2147483562u), 1 + static_cast<int>((seed >> 32) % 2147483398u)};
  return fastjet::AreaDefinition(fastjet::active_area_explicit_ghosts,
                                 fastjet::GhostedAreaSpec(5.0, 1, 0.01).with_fixed_seed(s));
}
std::uint64_t seed_of(const char* module, const event_id& id) {
  return hep::event_seed(2026, hep::salt(module), id.run, id.lumi, id.event);
}
std::vector<fastjet::PseudoJet> pseudojets(const hep::candidates& c) {
  std::vector<fastjet::PseudoJet> v;
  for (const hep::candidate& x : c) v.emplace_back(x.p.px, x.p.py, x.p.pz, x.p.e);
  return v;
}

TEST(RecoJob, ProductsMatchFastJetCalledDirectly) {
  HEP_NEEDS_DATA();
  auto s = std::make_shared<store>();
  process p = make_job(s, 8);
  const run_report r = run_single_threaded(p, events(6));
  ASSERT_EQ(r.events, 6u);
  ASSERT_EQ(s->events.size(), 6u);
  const std::vector<table> jec = tables_of(read(std::string(HEP_RECO_DIR) + "/conditions.json"));
  ASSERT_EQ(jec.size(), 2u);
  std::size_t jets_checked = 0, fat_checked = 0;
  for (const auto& [n, c] : s->events) {
    SCOPED_TRACE("event " + std::to_string(n));
    ASSERT_FALSE(c.chs.empty());
    // CHS: the particle-flow candidates without tracks from pile-up vertices.
    std::size_t removed = 0;
    for (const hep::candidate& x : c.particle_flow) removed += x.tracked && x.vertex != 0;
    EXPECT_EQ(c.chs.size() + removed, c.particle_flow.size());
    // rho: the median estimator on the CHS candidates, kt R = 0.4, |y| < 4.5 without the two hardest.
    fastjet::JetMedianBackgroundEstimator bge(fastjet::SelectorAbsRapMax(4.5) * (!fastjet::SelectorNHardest(2)),
                                              fastjet::JetDefinition(fastjet::kt_algorithm, 0.4),
                                              area_for(seed_of("hep::RhoEstimator", c.id)));
    bge.set_particles(pseudojets(c.chs));
    EXPECT_EQ(bge.rho(), c.rho.rho);
    EXPECT_EQ(bge.sigma(), c.rho.sigma);
    EXPECT_GT(c.rho.rho, 0);
    // Jets: anti-kt 0.4 with areas on CHS, subtracted with the event's rho, corrected by run 1's table.
    const fastjet::ClusterSequenceArea cs(pseudojets(c.chs), fastjet::JetDefinition(fastjet::antikt_algorithm, 0.4),
                                          area_for(seed_of("hep::JetProducer", c.id)));
    const fastjet::Subtractor sub(c.rho.rho);
    std::vector<hep::jet> expected;
    for (const fastjet::PseudoJet& j : cs.inclusive_jets(5.0)) {
      if (!(std::abs(j.eta()) < 4.7)) continue;
      const fastjet::PseudoJet sj = sub(j);
      if (!(sj.pt() > 0)) continue;
      const double f = jec[c.id.run - 1].factor(sj.pt(), sj.eta());
      const fastjet::PseudoJet cj = sj * f;
      if (cj.pt() >= 20) expected.push_back({{cj.px(), cj.py(), cj.pz(), cj.e()}, j.area(), j.pt(), f});
    }
    std::sort(expected.begin(), expected.end(),
              [](const hep::jet& a, const hep::jet& b) { return a.p.pt() > b.p.pt(); });
    ASSERT_EQ(c.ak4.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(c.ak4[i].p.px, expected[i].p.px);
      EXPECT_EQ(c.ak4[i].p.e, expected[i].p.e);
      EXPECT_EQ(c.ak4[i].area, expected[i].area);
      EXPECT_EQ(c.ak4[i].raw_pt, expected[i].raw_pt);
      EXPECT_EQ(c.ak4[i].jec, expected[i].jec);
      ++jets_checked;
    }
    // Fat jets: anti-kt 0.8 on every candidate, pt > 200, |eta| < 2.5, trimmed (kt 0.2, 5 %).
    const fastjet::ClusterSequence cs8(pseudojets(c.particle_flow),
                                       fastjet::JetDefinition(fastjet::antikt_algorithm, 0.8));
    const fastjet::Filter trim(fastjet::JetDefinition(fastjet::kt_algorithm, 0.2),
                               fastjet::SelectorPtFractionMin(0.05));
    std::vector<fastjet::PseudoJet> fat;
    for (const fastjet::PseudoJet& j : fastjet::sorted_by_pt(cs8.inclusive_jets(200.0)))
      if (std::abs(j.eta()) < 2.5) fat.push_back(j);
    ASSERT_EQ(c.ak8.size(), fat.size());
    for (std::size_t i = 0; i < fat.size(); ++i) {
      EXPECT_EQ(c.ak8[i].p.pz, fat[i].pz());
      EXPECT_EQ(c.ak8[i].groomed_mass, trim(fat[i]).m());
      EXPECT_LE(c.ak8[i].groomed_mass, fat[i].m() + 1e-9);
      ++fat_checked;
    }
    // Missing ET.
    double mex = 0, mey = 0;
    for (const hep::candidate& x : c.particle_flow) mex -= x.p.px, mey -= x.p.py;
    EXPECT_EQ(c.met.mex, mex);
    EXPECT_EQ(c.met.mey, mey);
  }
  EXPECT_GT(jets_checked, 12u);
  EXPECT_GT(fat_checked, 3u);
  // No FastJet warning: its list is not thread-safe, and the job's rules keep it empty.
  EXPECT_EQ(hep::fastjet_warnings(), "");
}

TEST(RecoJob, TheChecksumDoesNotDependOnThreadsOrEventsInFlight) {
  HEP_NEEDS_DATA();
#ifdef HEDDLE_TEST_SANITIZED
  const std::vector<unsigned> workers = {2};
  const std::vector<std::uint64_t> in_flight = {1, 3, 8};
#else
  const std::vector<unsigned> workers = {1, 2, 4};
  const std::vector<std::uint64_t> in_flight = {1, 2, 3, 5, 8};
#endif
  process single = make_job(nullptr);
  const run_report reference = run_single_threaded(single, events(12, 2, 6));
  ASSERT_EQ(reference.events, 12u);
  ASSERT_EQ(reference.runs.size(), 2u);
  for (unsigned w : workers)
    for (std::uint64_t f : in_flight) {
      process p = make_job(nullptr);
      run_options o = events(12, 2, 6);
      o.threads = w;
      o.events_in_flight = f;
      o.concurrent_lumis = 2;
      const run_report r = run_threaded(p, o);
      EXPECT_EQ(r.checksum, reference.checksum) << w << " workers, " << f << " events in flight";
    }
}

// Run 2 with other corrections: run 1's jets unchanged, run 2's scaled by the new factors.
TEST(RecoJob, ConditionsChangingAtARunBoundaryChangeTheCorrectedJets) {
  HEP_NEEDS_DATA();
  const std::string file = std::string(HEP_RECO_DIR) + "/conditions.json";
  const std::string text = read(file);
  auto doc = nlohmann::json::parse(text);
  auto& iovs = doc["records"]["hep::JetCorrectionsRecord"];
  nlohmann::json one = doc;  // run 1's table for every run
  one["records"]["hep::JetCorrectionsRecord"] = nlohmann::json::array({iovs[0]});

  auto s_one = std::make_shared<store>(), s_two = std::make_shared<store>();
  process p_one = make_job(s_one, 5, {}, conditions::from_json(one.dump(), "one interval"));
  process p_two = make_job(s_two, 5, {}, conditions::from_json(doc.dump(), file));
  (void)run_single_threaded(p_one, events(8, 2, 4));
  (void)run_single_threaded(p_two, events(8, 2, 4));
  const std::vector<table> t = tables_of(text);
  std::size_t changed = 0;
  for (const auto& [n, a] : s_one->events) {
    const captured& b = s_two->events.at(n);
    ASSERT_EQ(a.id.run, b.id.run);
    if (a.id.run == 1) {
      ASSERT_EQ(a.ak4.size(), b.ak4.size());
      for (std::size_t i = 0; i < a.ak4.size(); ++i) EXPECT_EQ(a.ak4[i].p.px, b.ak4[i].p.px);
      continue;
    }
    // Run 2: the same jets before corrections; each corrected by run 2's factor instead of run 1's.
    for (const hep::jet& jb : b.ak4) {
      const double subtracted_pt = jb.p.pt() / jb.jec;
      EXPECT_DOUBLE_EQ(jb.jec, t[1].factor(subtracted_pt, jb.p.eta()));
      auto same = std::find_if(a.ak4.begin(), a.ak4.end(),
                               [&](const hep::jet& ja) { return ja.raw_pt == jb.raw_pt && ja.area == jb.area; });
      if (same == a.ak4.end()) continue;  // below the pt cut with run 1's factors
      EXPECT_DOUBLE_EQ(same->jec, t[0].factor(subtracted_pt, jb.p.eta()));
      EXPECT_NEAR(jb.p.px / jb.jec, same->p.px / same->jec, 1e-9 * std::abs(jb.p.px));
      EXPECT_NE(jb.jec, same->jec);
      ++changed;
    }
  }
  EXPECT_GT(changed, 4u);
}

// A module that fails at one event.
class FailAt final : public global::EDProducer<> {
 public:
  explicit FailAt(std::uint64_t n) : n_(n), out_(produces<int>()) {}
  void produce(event& e, const event_setup&) const override {
    if (e.id().event == n_) throw std::runtime_error("detector on fire");
    e.put(out_, 1);
  }

 private:
  std::uint64_t n_;
  put_token<int> out_;
};

// A job that stops on an error leaves neither a file missing events nor a partial one, and an
// earlier file of the same name stays as it was; single-threaded and threaded.
TEST(RecoJob, AFailedJobLeavesNoFileAndKeepsTheEarlierOne) {
  HEP_NEEDS_DATA();
  const std::string file = out_dir() + "/kept.h5";
  for (bool single : {true, false}) {
    { std::ofstream(file) << "an earlier job's file"; }
    std::vector<parameter_override> o = {{"mixing.mu", "3", "test"}, {"output.fileName", file, "test"}};
    process p = make_process(load_config(HEP_RECO_CONFIG, o));
    p.add<FailAt>({"fragile"}, std::uint64_t{4});
    p.add_path("fails", {"fragile"});
    p.finalize();
    run_options r = events(8, 2, 8);
    r.threads = 2;
    r.events_in_flight = single ? 1 : 3;
    EXPECT_THROW((void)(single ? run_single_threaded : run_threaded)(p, r), module_error);
    EXPECT_EQ(read(file), "an earlier job's file") << (single ? "single-threaded" : "threaded");
    EXPECT_FALSE(std::filesystem::exists(file + ".partial"));
  }
}

TEST(RecoJob, BadInputIsNamed) {
  HEP_NEEDS_DATA();
  auto error_of = [](std::vector<parameter_override> o) -> std::string {
    try {
      (void)make_job(nullptr, 5, std::move(o));
    } catch (const config_error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string missing = error_of({{"mixing.pileupFiles", "[\"/nonexistent/pileup.dat\"]", "test"}});
  EXPECT_NE(missing.find("process.producers[0] 'mixing'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("/nonexistent/pileup.dat: cannot open: No such file or directory"), std::string::npos)
      << missing;
  const std::string mu = error_of({{"mixing.mu", "-1", "test"}});
  EXPECT_NE(mu.find("'mixing'"), std::string::npos) << mu;
  EXPECT_NE(mu.find("parameter 'mu'"), std::string::npos) << mu;
  const std::string unknown = error_of({{"ak4Jets.ptMinn", "20", "test"}});
  EXPECT_NE(unknown.find("ptMinn"), std::string::npos) << unknown;
  const std::string label = error_of({{"nosuch.mu", "3", "test"}});
  EXPECT_NE(label.find("no module labelled 'nosuch'"), std::string::npos) << label;
}

}  // namespace

#undef HEP_NEEDS_DATA
