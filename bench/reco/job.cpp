// SPDX-License-Identifier: Apache-2.0
// heddle-reco-job: the reconstruction job (examples/hep/reco.json, its modules linked in) as one
// process, for heddle-bench reco, which starts it to compare one threaded process against several
// single-threaded ones (how CMS ran before its framework was threaded), memory included.
//   heddle-reco-job CONFIG --events N --mu MU [--first-event K] [--seed S] [--threads T --in-flight F |
//   --single-threaded]
//                   [--out FILE]
// Prints one JSON line: {"events": N, "checksum": "0x...", "events_checksum": "0x..." (the events'
// share of it, run_report::events_checksum), "loop_s": seconds of the event loop (run_report::wall_s),
// "vm_hwm_bytes": the process's peak RSS (VmHWM of /proc/self/status, read at its end, when
// everything it will hold has been held)}.
// --seed replaces every module's seed. An event's products depend only on the seeds and on its
// (run, lumi, event) numbers, and with --first-event K (run_options::first_event) the events are
// K .. K + N - 1 of the job from 0, with their numbers: of processes given the same seed, one
// given --events K and one given --first-event K run exactly the two parts of one given
// --events K + N, and their events_checksums add up (mod 2^64) to its.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <heddle/fw.hpp>

namespace {

// VmHWM of /proc/self/status in bytes: the most this process has held resident (its own: an exec
// starts the count afresh, unlike the ru_maxrss a parent gets from wait4). 0 when it cannot be read.
double vm_hwm_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) * 1024;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace heddle::fw;
  CLI::App app{"heddle-reco-job: the hep reconstruction job in one process (for heddle-bench reco)"};
  std::string config, out = "/dev/null";
  std::uint64_t events = 10, first_event = 0, in_flight = 4, seed = 2026;
  double mu = 50;
  unsigned threads = 2;
  bool single = false;
  app.add_option("config", config)->required();
  app.add_option("--events", events)->required();
  app.add_option("--first-event", first_event);
  app.add_option("--mu", mu)->required();
  app.add_option("--seed", seed);
  app.add_option("--threads", threads);
  app.add_option("--in-flight", in_flight);
  app.add_flag("--single-threaded", single);
  app.add_option("--out", out);
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<parameter_override> o = {{"mixing.mu", std::to_string(mu), "--mu"},
                                         {"output.fileName", out, "--out"},
                                         {"output.report", "false", "heddle-reco-job"}};
    for (const char* label : {"mixing", "particleFlow", "rho", "ak4Jets"})
      o.push_back({std::string(label) + ".seed", std::to_string(seed), "--seed"});
    const process_config c = load_config(config, o);
    process p = make_process(c);
    p.finalize();
    run_options r;
    r.first_event = first_event;
    r.events = events;
    r.events_per_lumi = c.events_per_lumi;
    r.events_per_run = c.events_per_run;
    r.threads = single ? 1 : threads;
    r.events_in_flight = single ? 1 : in_flight;
    r.concurrent_lumis = c.concurrent_lumis;
    const run_report rep = single ? run_single_threaded(p, r) : run_threaded(p, r);
    std::printf("{\"events\": %llu, \"checksum\": \"%#llx\", \"events_checksum\": \"%#llx\", \"loop_s\": %.6f, "
                "\"vm_hwm_bytes\": %.0f}\n",
                static_cast<unsigned long long>(rep.events), static_cast<unsigned long long>(rep.checksum),
                static_cast<unsigned long long>(rep.events_checksum), rep.wall_s, vm_hwm_bytes());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-reco-job: %s\n", e.what());
    return 1;
  }
}
