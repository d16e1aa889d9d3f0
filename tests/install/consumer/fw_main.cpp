// SPDX-License-Identifier: Apache-2.0
// The framework from an installed heddle: a small job of typed products (a global producer of
// hits, an ExternalWork producer waiting on a timer, a one:: module with state, a filter and an
// output module), run multi-threaded and with the single-threaded reference processor; the
// checksums must agree.
#include <heddle/fw.hpp>
#include <heddle/heddle.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace fw = heddle::fw;

namespace {

struct hits final : fw::global::EDProducer<> {
  hits() : out(produces<std::vector<int>>()) {}
  void produce(fw::event& e, const fw::event_setup&) const override {
    std::vector<int>& v = e.emplace(out);
    for (std::uint64_t k = 0; k <= e.id().event % 5; ++k) v.push_back(static_cast<int>(e.id().event + k));
  }
  fw::put_token<std::vector<int>> out;
};

struct calibrated final : fw::global::EDProducer<fw::ExternalWork> {
  calibrated() : in(consumes<std::vector<int>>("hits")), out(produces<double>()) {}
  heddle::future<void> acquire(const fw::event&, const fw::event_setup&) const override {
    return heddle::sleep_for(std::chrono::microseconds(100));
  }
  void produce(fw::event& e, const fw::event_setup&) const override {
    double sum = 0;
    for (int h : e.get(in)) sum += h * 0.5;
    e.put(out, sum);
  }
  fw::get_token<std::vector<int>> in;
  fw::put_token<double> out;
};

struct counter final : fw::one::EDProducer<> {
  counter() : in(consumes<std::vector<int>>("hits")), out(produces<std::int64_t>()) {}
  void produce(fw::event& e, const fw::event_setup&) override {
    ++seen;  // one event at a time: no lock
    e.put(out, static_cast<std::int64_t>(e.get(in).size()));
  }
  fw::get_token<std::vector<int>> in;
  fw::put_token<std::int64_t> out;
  std::uint64_t seen = 0;
};

struct positive final : fw::global::EDFilter<> {
  positive() : energy(consumes<double>("calib")), size(consumes<std::int64_t>("count")) {}
  bool filter(fw::event& e, const fw::event_setup&) const override { return e.get(energy) > 0 && e.get(size) % 2 == 1; }
  fw::get_token<double> energy;
  fw::get_token<std::int64_t> size;
};

struct writer final : fw::global::OutputModule<> {
  writer() : size(consumes<std::int64_t>("count")) {}
  void write(const fw::event& e) const override { written.fetch_add(e.get(size), std::memory_order_relaxed); }
  fw::get_token<std::int64_t> size;
  mutable std::atomic<std::int64_t> written{0};
};

struct job {
  fw::process p{"consumer"};
  counter* count;
  writer* out;
  job() {
    p.add<hits>({"hits"});
    p.add<calibrated>({"calib"});
    count = &p.add<counter>({"count"});
    p.add<positive>({"positive"});
    out = &p.add<writer>({.label = "out", .select_paths = {"p"}});
    p.add_path("p", {"positive"});
    p.add_end_path("e", {"out"});
  }
};
}  // namespace

int main() {
  fw::run_options o;
  o.threads = 2;
  o.events_in_flight = 8;
  o.events = 1000;
  job a, b;
  const auto threaded = fw::run_threaded(a.p, o);
  const auto single = fw::run_single_threaded(b.p, o);
  if (threaded.events != 1000 || threaded.checksum != single.checksum || a.count->seen != 1000 ||
      a.out->written.load() != b.out->written.load() || a.out->written.load() == 0) {
    std::fprintf(stderr, "consumer: framework checks failed (checksums %llx and %llx)\n",
                 static_cast<unsigned long long>(threaded.checksum), static_cast<unsigned long long>(single.checksum));
    return 1;
  }
  std::puts("consumer: framework checks passed");
  return 0;
}
