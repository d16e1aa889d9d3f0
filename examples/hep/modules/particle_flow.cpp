// SPDX-License-Identifier: Apache-2.0
// The particle-level modules: hep::DetectorResponse (particles -> particle-flow candidates),
// hep::ChargedHadronSubtraction (candidates without pile-up tracks) and hep::MissingEtProducer.
// All global:: and stateless: any number of events at once.
#include <stdexcept>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "../core/detector.hpp"
#include "../core/seeds.hpp"

namespace hep {

namespace {
detector_config read_detector(const heddle::fw::parameter_set& ps) {
  detector_config c;
  c.calorimeter_eta_max = ps.get<double>("calorimeterEtaMax", c.calorimeter_eta_max);
  c.tracker_eta_max = ps.get<double>("trackerEtaMax", c.tracker_eta_max);
  c.hadron_stochastic = ps.get<double>("hadronStochastic", c.hadron_stochastic);
  c.hadron_constant = ps.get<double>("hadronConstant", c.hadron_constant);
  c.em_stochastic = ps.get<double>("emStochastic", c.em_stochastic);
  c.em_constant = ps.get<double>("emConstant", c.em_constant);
  c.track_constant = ps.get<double>("trackConstant", c.track_constant);
  c.track_slope = ps.get<double>("trackSlope", c.track_slope);
  try {
    check(c);
  } catch (const std::invalid_argument& e) {
    throw heddle::fw::config_error(ps.where() + ": " + e.what());
  }
  return c;
}
}  // namespace

class DetectorResponse final : public heddle::fw::global::EDProducer<> {
 public:
  explicit DetectorResponse(const heddle::fw::parameter_set& ps)
      : src_(consumes<particles>(ps.get<heddle::fw::input_tag>("src"))),
        config_(read_detector(ps)),
        seed_(ps.get<std::uint64_t>("seed", 1)),
        out_(produces<candidates>()) {}

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    const std::uint64_t seed = event_seed(seed_, salt("hep::DetectorResponse"), e.id().run, e.id().lumi, e.id().event);
    e.put(out_, detector_response(e.get(src_), config_, seed));
  }

 private:
  heddle::fw::get_token<particles> src_;
  detector_config config_;
  std::uint64_t seed_;
  heddle::fw::put_token<candidates> out_;
};

class ChargedHadronSubtraction final : public heddle::fw::global::EDProducer<> {
 public:
  explicit ChargedHadronSubtraction(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))), out_(produces<candidates>()) {}

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    e.put(out_, charged_hadron_subtraction(e.get(src_)));
  }

 private:
  heddle::fw::get_token<candidates> src_;
  heddle::fw::put_token<candidates> out_;
};

class MissingEtProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit MissingEtProducer(const heddle::fw::parameter_set& ps)
      : src_(consumes<candidates>(ps.get<heddle::fw::input_tag>("src"))), out_(produces<missing_et>()) {}

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    e.put(out_, missing_transverse_momentum(e.get(src_)));
  }

 private:
  heddle::fw::get_token<candidates> src_;
  heddle::fw::put_token<missing_et> out_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::DetectorResponse);
HEDDLE_FW_MODULE(hep::ChargedHadronSubtraction);
HEDDLE_FW_MODULE(hep::MissingEtProducer);
