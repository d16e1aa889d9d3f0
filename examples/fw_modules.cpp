// SPDX-License-Identifier: Apache-2.0
// An event-processing job written in C++ against the framework, with user modules of each kind and
// typed products: a digitizer that makes the event's hits (std::vector<int>), a calibration that
// waits on a (simulated) remote service through ExternalWork and holds no thread meanwhile, a
// tracker that keeps state across events and so runs one event at a time (one::), a filter, and an
// output module on an end path. The same process runs multi-threaded with many events in flight
// and with the single-threaded reference processor; the checksums agree.
#include <heddle/fw.hpp>
#include <heddle/heddle.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace fw = heddle::fw;
using namespace std::chrono_literals;

namespace reco {

// What the tracker makes: a product of the user's own type. heddle_fw_digest (found by
// argument-dependent lookup) says what it adds to the run's checksum.
struct track_summary {
  std::size_t tracks = 0;
  double energy = 0;
};
std::uint64_t heddle_fw_digest(const track_summary& t) noexcept {
  return fw::product_digest(t.tracks) * 31 + fw::product_digest(t.energy);
}

// Raw hits: 4 to 12 ADC counts per event, from the event number.
class digitizer final : public fw::global::EDProducer<> {
 public:
  digitizer() : hits_(produces<std::vector<int>>()) {}
  void produce(fw::event& e, const fw::event_setup&) const override {
    const std::uint64_t n = e.id().event;
    std::vector<int>& hits = e.emplace(hits_);  // built in place, filled here
    for (std::uint64_t k = 0; k < 4 + n % 9; ++k) hits.push_back(static_cast<int>((n * 31 + k * 17) % 1024));
  }

 private:
  fw::put_token<std::vector<int>> hits_;
};

// Calibrated energies, with constants from a remote service: acquire() starts the request and
// returns a future of it; produce() runs once it is ready. Here the "reply" is a 2 ms timer.
class calibration final : public fw::global::EDProducer<fw::ExternalWork> {
 public:
  calibration() : hits_(consumes<std::vector<int>>("hits")), energies_(produces<std::vector<double>>()) {}
  heddle::future<void> acquire(const fw::event&, const fw::event_setup&) const override {
    return heddle::sleep_for(2ms);
  }
  void produce(fw::event& e, const fw::event_setup&) const override {
    const std::vector<int>& hits = e.get(hits_);  // the digitizer's vector itself, not a copy
    std::vector<double> energies;
    energies.reserve(hits.size());
    for (int h : hits) energies.push_back(h * 0.25 + 1.5);
    e.put(energies_, std::move(energies));
  }

 private:
  fw::get_token<std::vector<int>> hits_;
  fw::put_token<std::vector<double>> energies_;
};

// Pairs neighbouring energies into tracks. Counts the events it has seen: state across events, so
// a one:: module, which the framework runs one event at a time.
class tracker final : public fw::one::EDProducer<> {
 public:
  tracker() : energies_(consumes<std::vector<double>>("calib")), tracks_(produces<track_summary>()) {}
  void produce(fw::event& e, const fw::event_setup&) override {
    ++seen_;  // no lock: one event at a time
    const std::vector<double>& energies = e.get(energies_);
    track_summary t;
    for (std::size_t k = 0; k + 1 < energies.size(); k += 2) {
      ++t.tracks;
      t.energy += energies[k] + energies[k + 1];
    }
    e.put(tracks_, t);
  }
  void end_job() override { std::printf("tracker: %llu events seen\n", static_cast<unsigned long long>(seen_)); }

 private:
  fw::get_token<std::vector<double>> energies_;
  fw::put_token<track_summary> tracks_;
  std::uint64_t seen_ = 0;
};

// Passes events with an even number of tracks.
class even_tracks final : public fw::global::EDFilter<> {
 public:
  even_tracks() : tracks_(consumes<track_summary>("tracks")) {}
  bool filter(fw::event& e, const fw::event_setup&) const override { return e.get(tracks_).tracks % 2 == 0; }

 private:
  fw::get_token<track_summary> tracks_;
};

// "Writes" the selected events: counts them and their tracks.
class writer final : public fw::global::OutputModule<> {
 public:
  writer() : tracks_(consumes<track_summary>("tracks")) {}
  void write(const fw::event& e) const override {
    events_.fetch_add(1, std::memory_order_relaxed);
    tracks_written_.fetch_add(e.get(tracks_).tracks, std::memory_order_relaxed);
  }
  void end_job() override {
    std::printf("writer: %llu events, %llu tracks\n", static_cast<unsigned long long>(events_.load()),
                static_cast<unsigned long long>(tracks_written_.load()));
  }

 private:
  fw::get_token<track_summary> tracks_;
  mutable std::atomic<std::uint64_t> events_{0}, tracks_written_{0};  // write() is const and concurrent
};

fw::process make() {
  fw::process p("fw_modules example");
  p.add<digitizer>({"hits"});
  p.add<calibration>({"calib"});
  p.add<tracker>({"tracks"});
  p.add<even_tracks>({"even"});
  p.add<writer>({.label = "out", .select_paths = {"selected"}});
  p.add_path("selected", {"even"});
  p.add_end_path("write", {"out"});
  return p;
}

}  // namespace reco

int main() {
  fw::run_options o;
  o.events = 2000;
  o.events_in_flight = 200;  // 200 calibration requests outstanding at once
  fw::process threaded = reco::make();
  const fw::run_report r = fw::run_threaded(threaded, o);
  fw::process reference = reco::make();
  o.events = 200;  // the reference waits 2 ms per event: fewer of them, then compare the first 200
  const fw::run_report s = fw::run_single_threaded(reference, o);
  fw::process again = reco::make();
  const fw::run_report t = fw::run_threaded(again, o);
  std::printf("%llu events in %.3f s (%.0f events/s) with %u workers; checksum %016llx\n",
              static_cast<unsigned long long>(r.events), r.wall_s, r.events_per_s(), r.workers,
              static_cast<unsigned long long>(r.checksum));
  std::printf("first 200 events: threaded %016llx, single-threaded %016llx (%s)\n",
              static_cast<unsigned long long>(t.checksum), static_cast<unsigned long long>(s.checksum),
              t.checksum == s.checksum ? "equal" : "DIFFERENT");
  return t.checksum == s.checksum ? 0 : 1;
}
