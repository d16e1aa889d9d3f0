// SPDX-License-Identifier: Apache-2.0
// fwplugin::DistanceSummary: sums, over the events it sees, how many tracks they had and how far
// the tracks got, and prints the totals at the end of each run and of the job. A one:: analyzer:
// one event at a time, so its sums need no lock.
#include <cstdio>
#include <string>

#include <heddle/fw/one.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "track.hpp"

namespace fwplugin {

class DistanceSummary final : public heddle::fw::one::EDAnalyzer<> {
 public:
  explicit DistanceSummary(const heddle::fw::parameter_set& ps)
      : token_(consumes<tracks>(ps.get<heddle::fw::input_tag>("src"))),
        name_(ps.get<std::string>("title", "distances")) {}

  void analyze(const heddle::fw::event& e, const heddle::fw::event_setup&) override {
    const tracks& all = e.get(token_);
    ++run_.events;
    run_.tracks += all.size();
    for (const track& t : all) run_.distance += t.distance();
  }

  void end_run(heddle::fw::run& r, const heddle::fw::event_setup&) override {
    print(("run " + std::to_string(r.number())).c_str(), run_);
    job_.events += run_.events;
    job_.tracks += run_.tracks;
    job_.distance += run_.distance;
    run_ = {};
  }

  void end_job() override { print("job", job_); }

 private:
  struct sums {
    unsigned long events = 0, tracks = 0;
    double distance = 0;
  };

  void print(const char* what, const sums& s) const {
    std::printf("%s, %s: %lu events, %lu tracks, mean distance %.3f\n", name_.c_str(), what, s.events, s.tracks,
                s.tracks ? s.distance / double(s.tracks) : 0.0);
  }

  heddle::fw::get_token<tracks> token_;
  std::string name_;
  sums run_, job_;
};

}  // namespace fwplugin

HEDDLE_FW_MODULE(fwplugin::DistanceSummary);
