// SPDX-License-Identifier: Apache-2.0
// hep::MixingModule: each event is one hard scatter plus Poisson(mu) pile-up interactions drawn
// from a minimum-bias library, each rotated by a random azimuth, reflected along the beam half of
// the time and tagged with its vertex (reco_steps.hpp: mix_event); CMS's MixingModule, as
// heddle-fw's source only numbers the events. The libraries are read once, in the
// constructor, and shared by every event: the memory a process of this job needs beyond its code.
// Every draw comes from a generator seeded from (run, lumi, event), so an event is the same
// whichever thread makes it, in whatever order.
#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "reco_steps.hpp"

namespace hep {

namespace {

event_library load(const heddle::fw::parameter_set& ps) {
  try {
    return load_event_library(ps.get<std::vector<std::string>>("hardScatterFiles"),
                              ps.get<std::vector<std::string>>("pileupFiles"));
  } catch (const input_error& e) {
    throw heddle::fw::config_error(ps.where() + ": " + e.what());
  }
}

mixing_settings read(const heddle::fw::parameter_set& ps) {
  mixing_settings s;
  s.mu = ps.get<double>("mu");
  s.seed = ps.get<std::uint64_t>("seed", s.seed);
  s.rotate_hard_scatter = ps.get<bool>("rotateHardScatter", s.rotate_hard_scatter);
  if (!(s.mu >= 0) || s.mu > 10000) throw heddle::fw::parameter_error(ps.where(), "mu", "must be from 0 to 10000");
  return s;
}

}  // namespace

class MixingModule final : public heddle::fw::global::EDProducer<> {
 public:
  explicit MixingModule(const heddle::fw::parameter_set& ps)
      : library_(load(ps)),
        settings_(read(ps)),
        particles_(produces<particles>()),
        summary_(produces<mixing_summary>()) {}

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    mixing_summary summary;
    e.put(particles_, mix_event(library_, settings_, {e.id().run, e.id().lumi, e.id().event}, summary));
    e.put(summary_, summary);
  }

 private:
  event_library library_;
  mixing_settings settings_;
  heddle::fw::put_token<particles> particles_;
  heddle::fw::put_token<mixing_summary> summary_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::MixingModule);
