// The FastJet modules: hep::RhoEstimator (the event's median background density, FastJet's
// JetMedianBackgroundEstimator), hep::JetProducer (anti-kt R = 0.4 with active areas,
// rho × area subtraction, corrections from conditions) and hep::FatJetProducer (anti-kt R = 0.8,
// trimmed mass). global:: modules: each event clusters its own objects, ghosts come from a
// per-event seed, and the banner is printed from begin_job (fastjet_support.hpp).
#include <algorithm>
#include <cmath>

#include <fastjet/ClusterSequence.hh>
#include <fastjet/ClusterSequenceArea.hh>
#include <fastjet/Selector.hh>
#include <fastjet/tools/Filter.hh>
#include <fastjet/tools/JetMedianBackgroundEstimator.hh>
#include <fastjet/tools/Subtractor.hh>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "../core/jet_corrections.hpp"
#include "../core/seeds.hpp"
#include "fastjet_support.hpp"

namespace hep {

namespace {

double positive(const heddle::fw::parameter_set& ps, const char* name, double fallback) {
  const double v = ps.get<double>(name, fallback);
  if (!(v > 0) || !std::isfinite(v)) throw heddle::fw::parameter_error(ps.where(), name, "must be a positive number");
  return v;
}

// The ghosts' settings every area of the job shares.
struct ghost_settings {
  double max_rap, area;
  std::uint64_t seed;
  explicit ghost_settings(const heddle::fw::parameter_set& ps)
      : max_rap(positive(ps, "ghostMaxRap", 5.0)), area(positive(ps, "ghostArea", 0.01)), seed(ps.get<std::uint64_t>("seed", 1)) {}
  fastjet::AreaDefinition for_event(const heddle::fw::event& e, const char* module) const {
    return seeded_active_area(max_rap, area, event_seed(seed, salt(module), e.id().run, e.id().lumi, e.id().event));
  }
};

}  // namespace

class RhoEstimator final : public heddle::fw::global::EDProducer<> {
 public:
  explicit RhoEstimator(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))),
        r_(positive(ps, "jetR", 0.4)),
        rap_max_(positive(ps, "rapMax", 4.5)),
        exclude_hardest_(ps.get<unsigned>("excludeHardest", 2)),
        ghosts_(ps),
        out_(produces<background>()) {
    if (ghosts_.max_rap < rap_max_) throw heddle::fw::parameter_error(ps.where(), "ghostMaxRap", "must be at least rapMax");
  }

  void begin_job() override { print_fastjet_banner_once(); }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    const fastjet::Selector range = fastjet::SelectorAbsRapMax(rap_max_) * (!fastjet::SelectorNHardest(exclude_hardest_));
    fastjet::JetMedianBackgroundEstimator estimator(range, fastjet::JetDefinition(fastjet::kt_algorithm, r_),
                                                    ghosts_.for_event(e, "hep::RhoEstimator"));
    estimator.set_particles(to_pseudojets(e.get(src_)));
    e.put(out_, background{estimator.rho(), estimator.sigma()});
  }

 private:
  heddle::fw::get_token<candidates> src_;
  double r_, rap_max_;
  unsigned exclude_hardest_;
  ghost_settings ghosts_;
  heddle::fw::put_token<background> out_;
};

class JetProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit JetProducer(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))),
        rho_(consumes<background>(ps.get<heddle::fw::input_tag>("rho"))),
        corrections_(es_consumes<jet_corrections, JetCorrectionsRecord>()),
        r_(positive(ps, "jetR", 0.4)),
        raw_pt_min_(ps.get<double>("rawPtMin", 5.0)),
        pt_min_(ps.get<double>("ptMin", 20.0)),
        eta_max_(positive(ps, "etaMax", 4.7)),
        ghosts_(ps),
        out_(produces<jets>()) {}

  void begin_job() override { print_fastjet_banner_once(); }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup& setup) const override {
    const std::vector<fastjet::PseudoJet> input = to_pseudojets(e.get(src_));
    const fastjet::ClusterSequenceArea cs(input, fastjet::JetDefinition(fastjet::antikt_algorithm, r_),
                                          ghosts_.for_event(e, "hep::JetProducer"));
    const fastjet::Subtractor subtract(e.get(rho_).rho);
    const jet_corrections& jec = setup.get(corrections_);
    jets& out = e.emplace(out_);
    for (const fastjet::PseudoJet& j : cs.inclusive_jets(raw_pt_min_)) {
      if (!(std::abs(j.eta()) < eta_max_)) continue;
      const fastjet::PseudoJet s = subtract(j);
      if (!(s.pt() > 0)) continue;  // subtracted away: a pile-up jet
      const double f = jec.factor(s.pt(), s.eta());
      jet out_jet{to_four_momentum(s * f), j.area(), j.pt(), f};
      if (out_jet.p.pt() >= pt_min_) out.push_back(out_jet);
    }
    std::sort(out.begin(), out.end(), [](const jet& a, const jet& b) { return a.p.pt() > b.p.pt(); });
  }

 private:
  heddle::fw::get_token<candidates> src_;
  heddle::fw::get_token<background> rho_;
  heddle::fw::es_token<jet_corrections, JetCorrectionsRecord> corrections_;
  double r_, raw_pt_min_, pt_min_, eta_max_;
  ghost_settings ghosts_;
  heddle::fw::put_token<jets> out_;
};

class FatJetProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit FatJetProducer(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))),
        r_(positive(ps, "jetR", 0.8)),
        pt_min_(ps.get<double>("ptMin", 200.0)),
        eta_max_(positive(ps, "etaMax", 2.5)),
        trim_r_(positive(ps, "trimR", 0.2)),
        trim_fraction_(positive(ps, "trimPtFraction", 0.05)),
        out_(produces<fat_jets>()) {}

  void begin_job() override { print_fastjet_banner_once(); }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    const fastjet::ClusterSequence cs(to_pseudojets(e.get(src_)), fastjet::JetDefinition(fastjet::antikt_algorithm, r_));
    const fastjet::Filter trimmer(fastjet::JetDefinition(fastjet::kt_algorithm, trim_r_), fastjet::SelectorPtFractionMin(trim_fraction_));
    fat_jets& out = e.emplace(out_);
    for (const fastjet::PseudoJet& j : fastjet::sorted_by_pt(cs.inclusive_jets(pt_min_))) {
      if (!(std::abs(j.eta()) < eta_max_)) continue;
      out.push_back({to_four_momentum(j), trimmer(j).m()});
    }
  }

 private:
  heddle::fw::get_token<candidates> src_;
  double r_, pt_min_, eta_max_, trim_r_, trim_fraction_;
  heddle::fw::put_token<fat_jets> out_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::RhoEstimator);
HEDDLE_FW_MODULE(hep::JetProducer);
HEDDLE_FW_MODULE(hep::FatJetProducer);
