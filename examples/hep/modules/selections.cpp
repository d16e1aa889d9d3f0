// SPDX-License-Identifier: Apache-2.0
// The job's two selections, as filters on their own paths: hep::DijetFilter (two corrected jets
// above a pt cut) and hep::BoostedFilter (a fat jet whose trimmed mass lies in a window). Each
// also puts its decision in the event (a bool), which the output modules write per event.
#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "reco_steps.hpp"

namespace hep {

class DijetFilter final : public heddle::fw::global::EDFilter<> {
 public:
  explicit DijetFilter(const heddle::fw::parameter_set& ps)
      : src_(consumes<jets>(ps.get<heddle::fw::input_tag>("src"))),
        pt_min_(ps.get<double>("ptMin", 100.0)),
        eta_max_(ps.get<double>("etaMax", 2.5)),
        decision_(produces<bool>()) {}

  bool filter(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    const bool pass = dijet_selected(e.get(src_), pt_min_, eta_max_);
    e.put(decision_, pass);
    return pass;
  }

 private:
  heddle::fw::get_token<jets> src_;
  double pt_min_, eta_max_;
  heddle::fw::put_token<bool> decision_;
};

class BoostedFilter final : public heddle::fw::global::EDFilter<> {
 public:
  explicit BoostedFilter(const heddle::fw::parameter_set& ps)
      : src_(consumes<fat_jets>(ps.get<heddle::fw::input_tag>("src"))),
        pt_min_(ps.get<double>("ptMin", 300.0)),
        mass_min_(ps.get<double>("massMin", 60.0)),
        mass_max_(ps.get<double>("massMax", 110.0)),
        decision_(produces<bool>()) {
    if (!(mass_min_ < mass_max_)) throw heddle::fw::parameter_error(ps.where(), "massMax", "must be above massMin");
  }

  bool filter(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    const bool pass = boosted_selected(e.get(src_), pt_min_, mass_min_, mass_max_);
    e.put(decision_, pass);
    return pass;
  }

 private:
  heddle::fw::get_token<fat_jets> src_;
  double pt_min_, mass_min_, mass_max_;
  heddle::fw::put_token<bool> decision_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::DijetFilter);
HEDDLE_FW_MODULE(hep::BoostedFilter);
