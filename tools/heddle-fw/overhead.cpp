// SPDX-License-Identifier: Apache-2.0
// heddle-fw overhead: what the framework itself costs per module execution, with every module's
// time scaled to nothing, so that a run's wall time is the processor's own work: the single-threaded
// processor, and the threaded one for each worker count asked for, at the same events in flight.
// Repetitions interleave the variants; medians and ranges are printed (and written as JSON).
//   heddle-fw overhead CONFIG [--events K] [--threads 1,2] [--in-flight M] [--reps R] [--json FILE]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "heddle/fw.hpp"
#include "numeric_options.hpp"
#include "run_command.hpp"
#include "scan_options.hpp"
#include "study.hpp"

namespace heddle::fw::tool {

namespace {

// Module times scaled to this are nothing: the study's busy-wait modules spin no iteration, its
// sleeping ones do not sleep.
constexpr double zero_time_scale = 1e-9;

struct overhead_settings {
  std::string config;
  std::uint64_t events = 2000;
  std::vector<unsigned> threads{1, 2};
  std::uint64_t in_flight = 2;
  int reps = 5;
  std::string json_file;
};

// One variant: its wall times, one per repetition.
struct variant {
  std::string name;
  bool single;
  unsigned threads;
  std::vector<double> wall_s;
};

double median_s(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// A fresh process each run (stream modules' instances and the first-run costs alike for each).
run_report run_once(const process_config& c, const overhead_settings& s, bool single, unsigned threads,
                    timeline* record = nullptr) {
  process p = make_process(c);
  run_options o;
  o.threads = single ? 1 : threads;
  o.events_in_flight = single ? 1 : s.in_flight;
  o.events = s.events;
  o.record = record;
  return single ? run_single_threaded(p, o) : run_threaded(p, o);
}

int overhead(const overhead_settings& s) {
  process_config file = load_config(s.config);
  study::timing_options timing = study::timing_of(file.options);
  timing.time_scale = zero_time_scale;
  const process_config c = study::with_timing(std::move(file), timing);

  // How many module executions the events take: a recorded single-threaded run (every processor
  // runs the same modules for the same events: their checksums agree).
  timeline record;
  const run_report counted = run_once(c, s, true, 1, &record);
  const double executions = double(record.entries().size());
  if (executions == 0) throw config_error(s.config + ": no module ran in " + std::to_string(s.events) + " events");

  std::vector<variant> variants{{"single-threaded processor", true, 1, {}}};
  for (unsigned t : s.threads)
    variants.push_back({"threaded, " + std::to_string(t) + (t == 1 ? " worker, " : " workers, ") +
                            std::to_string(s.in_flight) + " in flight",
                        false,
                        t,
                        {}});
  for (int rep = 0; rep < s.reps; ++rep)
    for (variant& v : variants) {
      const run_report r = run_once(c, s, v.single, v.threads);
      if (r.events_checksum != counted.events_checksum)
        throw std::runtime_error(v.name + ": checksum differs from the single-threaded processor's");
      v.wall_s.push_back(r.wall_s);
    }

  std::printf("heddle-fw overhead: %s, %" PRIu64 " events, %.0f module executions, time scale %g, %d repetitions\n",
              s.config.c_str(), s.events, executions, zero_time_scale, s.reps);
  std::printf("  %-36s %10s %22s %12s %20s\n", "processor", "wall s", "[min, max]", "ns a module", "[min, max]");
  nlohmann::json out{{"config", s.config},
                     {"events", s.events},
                     {"module_executions", executions},
                     {"time_scale", zero_time_scale},
                     {"reps", s.reps},
                     {"in_flight", s.in_flight}};
  for (const variant& v : variants) {
    const auto [lo, hi] = std::minmax_element(v.wall_s.begin(), v.wall_s.end());
    const double med = median_s(v.wall_s), ns = 1e9 / executions;
    std::printf("  %-36s %10.4f [%9.4f, %9.4f] %12.1f [%7.1f, %7.1f]\n", v.name.c_str(), med, *lo, *hi, med * ns,
                *lo * ns, *hi * ns);
    out["variants"].push_back({{"name", v.name},
                               {"threads", v.threads},
                               {"single_threaded", v.single},
                               {"wall_s", v.wall_s},
                               {"median_ns_per_module", med * ns}});
  }
  if (!s.json_file.empty()) {
    std::ofstream json(s.json_file);
    json << out.dump(2) << '\n';
    if (!json.flush()) throw config_error(s.json_file + ": cannot write");
  }
  return 0;
}

}  // namespace

int overhead_main(int argc, char** argv) {
  CLI::App app{"heddle-fw overhead: the processors' own cost per module execution, with module times scaled to nothing "
               "(wall time over module executions; medians of interleaved repetitions)"};
  app.name("heddle-fw overhead");
  overhead_settings s;
  app.add_option("config", s.config, "configuration file (JSON)")->required();
  app.add_option("--events", s.events, "events per run (default 2000)")
      ->check(heddle::tool::whole_number(1, UINT64_MAX));
  app.add_option("--threads", s.threads, "worker counts of the threaded runs: --threads 1,2 (default)")
      ->delimiter(',')
      ->check(heddle::tool::whole_number(1, max_threads));
  app.add_option("--in-flight", s.in_flight, "events in flight in the threaded runs (default 2)")
      ->check(heddle::tool::whole_number(1, max_scan_in_flight));
  app.add_option("--reps", s.reps, "interleaved repetitions (default 5)")->check(heddle::tool::whole_number(1, 1000));
  app.add_option("--json", s.json_file, "also write the figures as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    return overhead(s);
  } catch (const config_error& x) {
    std::fprintf(stderr, "heddle-fw overhead: error: %s\n", x.what());
    return 2;
  } catch (const module_error& x) {
    std::fprintf(stderr, "heddle-fw overhead: error: %s: %s\n", s.config.c_str(), x.what());
    return 1;
  } catch (const std::exception& x) {
    std::fprintf(stderr, "heddle-fw overhead: error: %s\n", x.what());
    return 1;
  }
}

}  // namespace heddle::fw::tool
