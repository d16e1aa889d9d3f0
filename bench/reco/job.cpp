// heddle-reco-job: the reconstruction job (examples/hep/reco.json, its modules linked in) as one
// process, for heddle-bench reco, which starts it to compare one threaded process against several
// single-threaded ones (how CMS ran before its framework was threaded), memory included.
//   heddle-reco-job CONFIG --events N --mu MU [--seed S] [--threads T --in-flight F | --single-threaded] [--out FILE]
// Prints one JSON line: {"events": N, "checksum": "0x...", "wall_s": seconds of the run}.
// --seed replaces every module's seed: processes given different seeds run different events.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include <heddle/fw.hpp>

int main(int argc, char** argv) {
  using namespace heddle::fw;
  CLI::App app{"heddle-reco-job: the hep reconstruction job in one process (for heddle-bench reco)"};
  std::string config, out = "/dev/null";
  std::uint64_t events = 10, in_flight = 4, seed = 2026;
  double mu = 50;
  unsigned threads = 2;
  bool single = false;
  app.add_option("config", config)->required();
  app.add_option("--events", events)->required();
  app.add_option("--mu", mu)->required();
  app.add_option("--seed", seed);
  app.add_option("--threads", threads);
  app.add_option("--in-flight", in_flight);
  app.add_flag("--single-threaded", single);
  app.add_option("--out", out);
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<parameter_override> o = {{"mixing.mu", std::to_string(mu), "--mu"}, {"output.fileName", out, "--out"},
                                         {"output.report", "false", "heddle-reco-job"}};
    for (const char* label : {"mixing", "particleFlow", "rho", "ak4Jets"})
      o.push_back({std::string(label) + ".seed", std::to_string(seed), "--seed"});
    const process_config c = load_config(config, o);
    process p = make_process(c, timing_options{}, nullptr);
    p.finalize();
    run_options r;
    r.events = events;
    r.events_per_lumi = c.events_per_lumi;
    r.events_per_run = c.events_per_run;
    r.threads = single ? 1 : threads;
    r.events_in_flight = single ? 1 : in_flight;
    r.concurrent_lumis = c.concurrent_lumis;
    const run_report rep = single ? run_single_threaded(p, r) : run_threaded(p, r);
    std::printf("{\"events\": %llu, \"checksum\": \"%#llx\", \"wall_s\": %.6f}\n", static_cast<unsigned long long>(rep.events),
                static_cast<unsigned long long>(rep.checksum), rep.wall_s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-reco-job: %s\n", e.what());
    return 1;
  }
}
