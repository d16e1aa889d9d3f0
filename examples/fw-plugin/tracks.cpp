// SPDX-License-Identifier: Apache-2.0
// fwplugin::RandomWalkTracks: a global producer of each event's tracks. Every event draws its own
// number of tracks and their steps from a generator seeded with the seed parameter and the event's
// number, so an event's tracks are the same whichever thread makes them, in whatever order.
#include <cmath>
#include <numbers>
#include <random>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "track.hpp"

namespace fwplugin {

double track::distance() const noexcept { return std::hypot(x, y); }

std::uint64_t heddle_fw_digest(const track& t) noexcept {
  return heddle::fw::product_digest(t.x) ^ (heddle::fw::product_digest(t.y) * 3) ^
         (heddle::fw::product_digest(t.length) * 5) ^ t.steps;
}

class RandomWalkTracks final : public heddle::fw::global::EDProducer<> {
 public:
  explicit RandomWalkTracks(const heddle::fw::parameter_set& ps)
      : seed_(ps.get<std::uint64_t>("seed", 1)),
        min_tracks_(ps.get<unsigned>("minTracks", 0)),
        max_tracks_(ps.get<unsigned>("maxTracks")),
        steps_(ps.get<unsigned>("steps")),
        step_size_(ps.get<double>("stepSize", 1.0)),
        token_(produces<tracks>()) {
    if (max_tracks_ < min_tracks_) throw heddle::fw::parameter_error(ps.where(), "maxTracks", "less than minTracks");
    if (!(step_size_ > 0)) throw heddle::fw::parameter_error(ps.where(), "stepSize", "not positive");
  }

  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    std::mt19937_64 rng(seed_ ^ (e.id().event * 0x9e3779b97f4a7c15ull));
    std::uniform_int_distribution<unsigned> count(min_tracks_, max_tracks_);
    std::uniform_real_distribution<double> angle(0, 2 * std::numbers::pi);
    std::exponential_distribution<double> step(1 / step_size_);
    tracks& out = e.emplace(token_);
    out.resize(count(rng));
    for (track& t : out) {
      for (unsigned i = 0; i < steps_; ++i) {
        const double a = angle(rng), s = step(rng);
        t.x += s * std::cos(a);
        t.y += s * std::sin(a);
        t.length += s;
      }
      t.steps = steps_;
    }
  }

 private:
  std::uint64_t seed_;
  unsigned min_tracks_, max_tracks_, steps_;
  double step_size_;
  heddle::fw::put_token<tracks> token_;
};

}  // namespace fwplugin

HEDDLE_FW_MODULE(fwplugin::RandomWalkTracks);
