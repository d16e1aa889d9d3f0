// SPDX-License-Identifier: Apache-2.0
// The FastJet modules: hep::RhoEstimator (the event's median background density, FastJet's
// JetMedianBackgroundEstimator), hep::JetProducer (anti-kt R = 0.4 with active areas,
// rho × area subtraction, corrections from conditions) and hep::FatJetProducer (anti-kt R = 0.8,
// trimmed mass): reco_steps.hpp does the work. global:: modules: each event clusters its own
// objects, ghosts come from a per-event seed, and the banner is printed from begin_job
// (fastjet_support.hpp).
#include <cmath>
#include <cstdio>
#include <string>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "fastjet_support.hpp"
#include "reco_steps.hpp"

namespace hep {

namespace {

double positive(const heddle::fw::parameter_set& ps, const char* name, double fallback) {
  const double v = ps.get<double>(name, fallback);
  if (!(v > 0) || !std::isfinite(v)) throw heddle::fw::parameter_error(ps.where(), name, "must be a positive number");
  return v;
}

ghost_settings read_ghosts(const heddle::fw::parameter_set& ps) {
  ghost_settings g;
  g.max_rap = positive(ps, "ghostMaxRap", g.max_rap);
  g.area = positive(ps, "ghostArea", g.area);
  g.seed = ps.get<std::uint64_t>("seed", g.seed);
  return g;
}

event_key key_of(const heddle::fw::event& e) { return {e.id().run, e.id().lumi, e.id().event}; }

}  // namespace

class RhoEstimator final : public heddle::fw::global::EDProducer<> {
 public:
  explicit RhoEstimator(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))), out_(produces<background>()) {
    s_.jet_r = positive(ps, "jetR", s_.jet_r);
    s_.rap_max = positive(ps, "rapMax", s_.rap_max);
    s_.exclude_hardest = ps.get<unsigned>("excludeHardest", s_.exclude_hardest);
    s_.ghosts = read_ghosts(ps);
    if (s_.ghosts.max_rap < s_.rap_max)
      throw heddle::fw::parameter_error(ps.where(), "ghostMaxRap", "must be at least rapMax");
  }

  void begin_job() override { print_fastjet_banner_once(); }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    e.put(out_, estimate_rho(e.get(src_), s_, key_of(e)));
  }

 private:
  heddle::fw::get_token<candidates> src_;
  rho_settings s_;
  heddle::fw::put_token<background> out_;
};

class JetProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit JetProducer(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))),
        rho_(consumes<background>(ps.get<heddle::fw::input_tag>("rho"))),
        corrections_(es_consumes<jet_corrections, JetCorrectionsRecord>()),
        out_(produces<jets>()) {
    s_.jet_r = positive(ps, "jetR", s_.jet_r);
    s_.raw_pt_min = ps.get<double>("rawPtMin", s_.raw_pt_min);
    s_.pt_min = ps.get<double>("ptMin", s_.pt_min);
    s_.eta_max = positive(ps, "etaMax", s_.eta_max);
    s_.ghosts = read_ghosts(ps);
  }

  void begin_job() override { print_fastjet_banner_once(); }
  // A FastJet warning means one of fastjet_support.hpp's rules was broken: its list was written
  // unsynchronised. Say so rather than let it pass.
  void end_job() override {
    if (const std::string w = fastjet_warnings(); !w.empty())
      std::fprintf(stderr, "hep: FastJet issued warnings during the job (its warning list is not thread-safe):\n%s",
                   w.c_str());
  }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup& setup) const override {
    e.put(out_, cluster_jets(e.get(src_), e.get(rho_).rho, setup.get(corrections_), s_, key_of(e)));
  }

 private:
  heddle::fw::get_token<candidates> src_;
  heddle::fw::get_token<background> rho_;
  heddle::fw::es_token<jet_corrections, JetCorrectionsRecord> corrections_;
  jet_settings s_;
  heddle::fw::put_token<jets> out_;
};

class FatJetProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit FatJetProducer(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))), out_(produces<fat_jets>()) {
    s_.jet_r = positive(ps, "jetR", s_.jet_r);
    s_.pt_min = ps.get<double>("ptMin", s_.pt_min);
    s_.eta_max = positive(ps, "etaMax", s_.eta_max);
    s_.trim_r = positive(ps, "trimR", s_.trim_r);
    s_.trim_pt_fraction = positive(ps, "trimPtFraction", s_.trim_pt_fraction);
  }

  void begin_job() override { print_fastjet_banner_once(); }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    e.put(out_, cluster_fat_jets(e.get(src_), s_));
  }

 private:
  heddle::fw::get_token<candidates> src_;
  fat_jet_settings s_;
  heddle::fw::put_token<fat_jets> out_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::RhoEstimator);
HEDDLE_FW_MODULE(hep::JetProducer);
HEDDLE_FW_MODULE(hep::FatJetProducer);
