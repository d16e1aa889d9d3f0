// SPDX-License-Identifier: Apache-2.0
// fwplugin::TrackCountFilter: passes the events with at least minTracks tracks that walked at least
// minDistance away from the origin. Stateless, so global: any number of events at once.
#include <algorithm>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "track.hpp"

namespace fwplugin {

class TrackCountFilter final : public heddle::fw::global::EDFilter<> {
 public:
  explicit TrackCountFilter(const heddle::fw::parameter_set& ps)
      : token_(consumes<tracks>(ps.get<heddle::fw::input_tag>("src"))),
        min_tracks_(ps.get<unsigned>("minTracks")),
        min_distance_(ps.get<double>("minDistance", 0.0)) {}

  bool filter(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    const tracks& all = e.get(token_);
    const auto far = std::count_if(all.begin(), all.end(),
                                   [&](const track& t) { return t.distance() >= min_distance_; });
    return static_cast<unsigned long>(far) >= min_tracks_;
  }

 private:
  heddle::fw::get_token<tracks> token_;
  unsigned min_tracks_;
  double min_distance_;
};

}  // namespace fwplugin

HEDDLE_FW_MODULE(fwplugin::TrackCountFilter);
