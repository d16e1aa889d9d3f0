// hep::MixingModule: each event is one hard scatter plus Poisson(mu) pile-up interactions drawn
// from a minimum-bias library, each rotated by a random azimuth and tagged with its vertex (CMS's
// MixingModule; heddle-fw's source only numbers the events). The libraries are read once, in the
// constructor, and shared by every event: the memory a process of this job needs beyond its code.
// Every draw comes from a generator seeded from (run, lumi, event), so an event is the same
// whichever thread makes it, in whatever order.
#include <cmath>
#include <numbers>
#include <random>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "../core/event_file.hpp"
#include "../core/seeds.hpp"

namespace hep {

namespace {

particle rotated(const particle& in, double cos_phi, double sin_phi, std::uint32_t vertex) noexcept {
  particle out = in;
  out.p.px = in.p.px * cos_phi - in.p.py * sin_phi;
  out.p.py = in.p.px * sin_phi + in.p.py * cos_phi;
  out.vertex = vertex;
  return out;
}

event_library load(const heddle::fw::parameter_set& ps) {
  try {
    return load_event_library(ps.get<std::vector<std::string>>("hardScatterFiles"), ps.get<std::vector<std::string>>("pileupFiles"));
  } catch (const input_error& e) {
    throw heddle::fw::config_error(ps.where() + ": " + e.what());
  }
}

}  // namespace

class MixingModule final : public heddle::fw::global::EDProducer<> {
 public:
  explicit MixingModule(const heddle::fw::parameter_set& ps)
      : library_(load(ps)),
        mu_(ps.get<double>("mu")),
        seed_(ps.get<std::uint64_t>("seed", 1)),
        rotate_hard_(ps.get<bool>("rotateHardScatter", true)),
        particles_(produces<particles>()),
        summary_(produces<mixing_summary>()) {
    if (!(mu_ >= 0) || mu_ > 10000) throw heddle::fw::parameter_error(ps.where(), "mu", "must be from 0 to 10000");
  }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    std::mt19937_64 rng(event_seed(seed_, salt("hep::MixingModule"), e.id().run, e.id().lumi, e.id().event));
    std::uniform_real_distribution<double> azimuth(0, 2 * std::numbers::pi);
    std::uniform_int_distribution<std::size_t> pick_hard(0, library_.hard_scatters.size() - 1);
    std::uniform_int_distribution<std::size_t> pick_bias(0, library_.minimum_bias.size() - 1);

    mixing_summary summary;
    summary.hard_scatter = static_cast<std::uint32_t>(pick_hard(rng));
    summary.pileup = mu_ > 0 ? static_cast<std::uint32_t>(std::poisson_distribution<unsigned>(mu_)(rng)) : 0;

    particles& out = e.emplace(particles_);
    const interaction& hard = library_.hard_scatters[summary.hard_scatter];
    const double hard_phi = rotate_hard_ ? azimuth(rng) : 0.0;
    append(out, hard, hard_phi, 0);
    for (std::uint32_t k = 1; k <= summary.pileup; ++k) {
      const interaction& bias = library_.minimum_bias[pick_bias(rng)];
      append(out, bias, azimuth(rng), k);
    }
    e.put(summary_, summary);
  }

 private:
  static void append(particles& out, const interaction& in, double phi, std::uint32_t vertex) {
    const double c = std::cos(phi), s = std::sin(phi);
    for (const particle& p : in) out.push_back(rotated(p, c, s, vertex));
  }

  event_library library_;
  double mu_;
  std::uint64_t seed_;
  bool rotate_hard_;
  heddle::fw::put_token<particles> particles_;
  heddle::fw::put_token<mixing_summary> summary_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::MixingModule);
