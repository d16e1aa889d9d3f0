// An event-processing job written in C++ against the framework, with user modules: a producer
// that waits on a (simulated) remote service through ExternalWork and holds no thread meanwhile, a
// module that is only safe one event at a time, a filter, and an output module on an end path. The
// same process runs multi-threaded with many events in flight and with the single-threaded
// reference processor; the checksums agree.
#include <heddle/heddle.hpp>
#include <heddle/fw.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

namespace fw = heddle::fw;
using namespace std::chrono_literals;

namespace {

// Raw hits: a little work on the event number.
struct digitizer final : fw::module {
  std::int64_t produce(const fw::event_view& e) override { return std::int64_t(e.number() % 97) * 31 + 7; }
};

// Calibration constants from a remote service: acquire() starts the request and returns; produce()
// runs once the reply is there. Here the "reply" is a 2 ms timer.
struct calibration final : fw::module {
  bool external_work() const noexcept override { return true; }
  void acquire(const fw::event_view&, fw::async_handle h) override { h.after(heddle::sleep_for(2ms)); }
  std::int64_t produce(const fw::event_view& e) override { return e.input(0) * 3 + 1; }
};

// Keeps a running sum across events: safe only one event at a time.
struct tracker final : fw::module {
  std::int64_t seen = 0;  // touched by one event at a time (ThreadSafeBetweenModules)
  std::int64_t produce(const fw::event_view& e) override {
    seen += 1;
    return e.input_sum();
  }
};

// Passes events whose tracks are even.
struct even_tracks final : fw::module {
  std::int64_t produce(const fw::event_view& e) override { return e.input(0) % 2 == 0; }
};

struct writer final : fw::module {
  std::int64_t produce(const fw::event_view& e) override { return e.input(0); }
};

fw::process make() {
  fw::process p("fw_modules example");
  auto decl = [](std::string label, fw::module_role role, std::vector<std::string> inputs,
                 fw::thread_type t = fw::thread_type::safe_between_instances) {
    fw::module_decl d;
    d.label = std::move(label);
    d.role = role;
    d.threads = t;
    for (auto& i : inputs) d.inputs.push_back({i, ""});
    return d;
  };
  p.add_module(decl("hits", fw::module_role::producer, {}), std::make_unique<digitizer>());
  p.add_module(decl("calib", fw::module_role::producer, {"hits"}), std::make_unique<calibration>());
  p.add_module(decl("tracks", fw::module_role::producer, {"hits", "calib"}, fw::thread_type::safe_between_modules),
               std::make_unique<tracker>());
  p.add_module(decl("even", fw::module_role::filter, {"tracks"}), std::make_unique<even_tracks>());
  fw::module_decl out = decl("out", fw::module_role::output, {"tracks"});
  out.select_paths = {"selected"};
  p.add_module(std::move(out), std::make_unique<writer>());
  p.add_path("selected", {"even"});
  p.add_end_path("write", {"out"});
  return p;
}

}  // namespace

int main() {
  fw::run_options o;
  o.events = 2000;
  o.events_in_flight = 200;  // 200 calibration requests outstanding at once, on 2 workers
  fw::process threaded = make();
  const fw::run_report r = fw::run_threaded(threaded, o);
  fw::process reference = make();
  o.events = 200;  // the reference waits 2 ms per event: fewer of them, then compare the first 200
  const fw::run_report s = fw::run_single_threaded(reference, o);
  fw::process again = make();
  const fw::run_report t = fw::run_threaded(again, o);
  std::printf("%llu events in %.3f s (%.0f events/s) with %u workers; checksum %016llx\n",
              static_cast<unsigned long long>(r.events), r.wall_s, r.events_per_s(), r.workers,
              static_cast<unsigned long long>(r.checksum));
  std::printf("first 200 events: threaded %016llx, single-threaded %016llx (%s)\n",
              static_cast<unsigned long long>(t.checksum), static_cast<unsigned long long>(s.checksum),
              t.checksum == s.checksum ? "equal" : "DIFFERENT");
  return t.checksum == s.checksum ? 0 : 1;
}
