// The reco suite: the hep reconstruction job (examples/hep/reco.json) at mu = 50 and mu = 140.
//   - its shape: per-module mean times, work and critical path per event, the dependency bound
//     (from a recorded single-threaded run), beside the CMS study's configurations;
//   - the framework's overhead: the single-threaded processor against the same steps in a plain
//     serial loop (plain_loop.hpp), both writing the HDF5 file, whose tables must be equal;
//   - one process of heddle-fw with 2 workers and 1-8 events in flight against two independent
//     single-threaded processes that each run half the events (how CMS ran before its framework
//     was threaded), throughput and peak RSS, each process started fresh (heddle-reco-job);
//   - a timeline of one threaded run (tables: plotted with --plot).
// Every variant's checksum is checked against the single-threaded processor's.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include <heddle/fw.hpp>

#include "child.hpp"
#include "harness.hpp"
#include "plain_loop.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace heddle::bench::reco {

namespace suite_impl {  // keeps the using-directive below out of the files after this one in a unity build
namespace {

using namespace heddle::fw;

struct scale {
  double mu;
  std::uint64_t events;     // processes against threads, in-flight scan
  std::uint64_t loop_events;  // overhead, shape
};

std::string suffix(double mu) { return mu == 50 ? "" : "_mu" + std::to_string(int(mu)); }

// The median of peak-RSS samples, as the harness takes it of times.
double median_rss(const std::vector<double>& v) { return result{"rss", 1, {}, v}.median(); }

std::string temp_dir() {
  const auto d = std::filesystem::temp_directory_path() / ("heddle_bench_reco_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

process_config config_for(double mu, const std::string& out) {
  return load_config(HEP_RECO_CONFIG, {{"mixing.mu", std::to_string(mu), "bench"},
                                       {"output.fileName", out, "bench"},
                                       {"output.report", "false", "bench"}});
}

run_options options_for(const process_config& c, std::uint64_t events) {
  run_options o;
  o.events = events;
  o.events_per_lumi = c.events_per_lumi;
  o.events_per_run = c.events_per_run;
  o.concurrent_lumis = c.concurrent_lumis;
  return o;
}

// Per-module means, the bound, and the CMS configurations' shape beside it.
nlohmann::json shape(const scale& s, const std::string& dir, std::uint64_t& checksum) {
  const process_config c = config_for(s.mu, dir + "/shape.h5");
  process p = make_process(c, timing_options{}, nullptr);
  p.finalize();
  timeline t;
  run_options o = options_for(c, s.loop_events);
  o.record = &t;
  const run_report r = run_single_threaded(p, o);
  checksum = r.checksum;
  const dependency_bound b = analyse_dependencies(p, t, s.loop_events);
  std::vector<double> total(p.num_modules(), 0.0);
  for (const timeline_entry& e : t.entries()) total[e.module] += double(e.end_ns - e.start_ns) * 1e-9;
  const double work = b.work_s() / double(s.loop_events), critical = b.critical_path_s() / double(s.loop_events);
  std::printf("### mu = %g: the job's shape (%llu events, single-threaded, %.1f events/s)\n\n", s.mu,
              static_cast<unsigned long long>(s.loop_events), r.events_per_s());
  std::printf("| module | type | mean ms per event | share of the work |\n|---|---|---|---|\n");
  nlohmann::json modules = nlohmann::json::array();
  double fastjet = 0;
  for (std::size_t m = 0; m < p.num_modules(); ++m) {
    const double mean = total[m] / double(s.loop_events);
    const module_spec& spec = p.spec(m);
    std::printf("| %s | %s | %.2f | %.1f %% |\n", spec.label.c_str(), spec.type.c_str(), mean * 1e3, 100 * mean / work);
    modules.push_back({{"label", spec.label}, {"type", spec.type}, {"mean_ms", mean * 1e3}});
    if (spec.type == "hep::RhoEstimator" || spec.type == "hep::JetProducer" || spec.type == "hep::FatJetProducer") fastjet += mean;
  }
  // Were the FastJet modules behind one shared resource (one at a time), 2 workers could not
  // go beyond one event per FastJet time.
  const double bound2 = b.speedup(2, 4), serialised = std::min(bound2, work / fastjet);
  std::printf("\nWork %.1f ms and critical path %.1f ms per event (parallelism within an event %.2f); dependency bound at 2 "
              "workers: %.2f (1 in flight), %.2f (2), %.2f (4) x the single-threaded processor. FastJet's modules are "
              "%.0f %% of the work: behind one shared resource the bound at 2 workers would be %.2f.\n",
              work * 1e3, critical * 1e3, work / critical, b.speedup(2, 1), b.speedup(2, 2), bound2, 100 * fastjet / work,
              serialised);
  nlohmann::json cms = nlohmann::json::array();
  for (const char* name : {"reco_minbias_busywait.json", "reco_hipileup_5_2_0_busywait_perfectIO.json"}) {
    const std::string path = std::string(HEDDLE_CMS_DATA) + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    const process_config cc = load_config(path);
    const dependency_bound cb = analyse_dependencies(cc, 1, 200);
    const double cw = cb.work_s() / 200, cp = cb.critical_path_s() / 200;
    std::printf("The CMS study's %s: %zu modules, work %.1f ms and critical path %.1f ms per event (parallelism within "
                "an event %.2f).\n",
                name, cc.modules.size(), cw * 1e3, cp * 1e3, cw / cp);
    cms.push_back({{"config", name}, {"modules", cc.modules.size()}, {"work_ms", cw * 1e3}, {"critical_path_ms", cp * 1e3}});
  }
  std::printf("\n");
  return {{"modules", modules},
          {"work_ms", work * 1e3},
          {"critical_path_ms", critical * 1e3},
          {"bound_2_workers", {{"1", b.speedup(2, 1)}, {"2", b.speedup(2, 2)}, {"4", bound2}}},
          {"fastjet_share", fastjet / work},
          {"bound_2_workers_fastjet_serialised", serialised},
          {"cms", cms}};
}

void run(const options& opt, nlohmann::json& report) {
  std::printf("## reco: the hep reconstruction job (examples/hep/reco.json), heddle-fw against a plain loop and against "
              "independent processes %s\n\n",
              opt.scale_name());
  if (!std::filesystem::exists(std::string(HEP_FASTJET_EXAMPLES) + "/Pythia-PtMin1000-LHC-10ev.dat")) {
    std::printf("Skipped: %s has no Pythia files (apt-get install fastjet-examples).\n\n", HEP_FASTJET_EXAMPLES);
    return;
  }
  const std::string job = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "heddle-reco-job").string();
  if (!std::filesystem::exists(job)) throw std::runtime_error("reco: " + job + " was not built");
  const std::string dir = temp_dir();
  std::vector<scale> scales = {{50, opt.pick<std::uint64_t>(4, 24, 80, 400), opt.pick<std::uint64_t>(4, 16, 40, 200)},
                               {140, opt.pick<std::uint64_t>(2, 8, 60, 200), opt.pick<std::uint64_t>(2, 6, 16, 60)}};
  const std::vector<std::uint64_t> in_flight = opt.check ? std::vector<std::uint64_t>{2} : std::vector<std::uint64_t>{1, 2, 3, 4, 8};
  nlohmann::json extra = {{"tables", nlohmann::json::object()}};
  std::vector<result> all;
  for (const scale& s : scales) {
    std::uint64_t reference = 0;
    extra["shape" + suffix(s.mu)] = shape(s, dir, reference);

    // The framework against the plain loop, in this process, single-threaded.
    const process_config c = config_for(s.mu, dir + "/fw.h5");
    plain_loop loop(c);
    process fw_process = make_process(c, timing_options{}, nullptr);
    fw_process.finalize();
    const std::string mu = "mu=" + std::to_string(int(s.mu));
    std::vector<variant> vs;
    vs.push_back({"plain loop", 1, mu, [&] {
                    return timed([&] { return loop.run(s.loop_events, c.events_per_lumi, c.events_per_run, dir + "/plain.h5"); },
                                 [](std::uint64_t) {});
                  }});
    vs.push_back({"heddle-fw single-threaded", 1, mu, [&] {
                    return timed([&] { return run_single_threaded(fw_process, options_for(c, s.loop_events)).checksum; },
                                 expect_equal(reference, "reco: the single-threaded processor"));
                  }});

    // One threaded process against two single-threaded ones, each started fresh.
    std::map<std::string, std::vector<double>> rss;
    std::string process_checksums;
    auto job_args = [&](std::uint64_t events, std::uint64_t seed, const std::string& out) {
      return std::vector<std::string>{job, HEP_RECO_CONFIG, "--events", std::to_string(events), "--mu", std::to_string(s.mu),
                                      "--seed", std::to_string(seed), "--out", out};
    };
    const std::string processes = "two processes, half the events each";
    vs.push_back({processes, 2, mu, [&, processes] {
                    auto a = job_args(s.events / 2, 2026, dir + "/a.h5"), b = job_args(s.events - s.events / 2, 2027, dir + "/b.h5");
                    a.push_back("--single-threaded");
                    b.push_back("--single-threaded");
                    const child_result r = run_children({a, b});
                    const std::string sums = r.checksums[0] + r.checksums[1];
                    if (!process_checksums.empty() && sums != process_checksums)
                      throw std::runtime_error("reco: the processes' checksums changed between runs");
                    process_checksums = sums;
                    rss[processes].push_back(r.peak_rss_bytes);
                    return r.wall_s;
                  }});
    std::string threaded_checksum;
    for (std::uint64_t f : in_flight) {
      const std::string name = "heddle-fw, " + std::to_string(f) + " in flight";
      vs.push_back({name, 2, mu, [&, f, name] {
                      auto a = job_args(s.events, 2026, dir + "/t.h5");
                      a.insert(a.end(), {"--threads", "2", "--in-flight", std::to_string(f)});
                      const child_result r = run_children({a});
                      if (!threaded_checksum.empty() && r.checksums[0] != threaded_checksum)
                        throw std::runtime_error("reco: " + name + ": checksum " + r.checksums[0] + ", another run " + threaded_checksum);
                      threaded_checksum = r.checksums[0];
                      rss[name].push_back(r.peak_rss_bytes);
                      return r.wall_s;
                    }});
    }
    const std::vector<result> rs = run_interleaved(vs, opt.reps);
    // The plain loop wrote the same tables as the framework.
    for (const char* table : {"events", "jets", "fat_jets"})
      if (table_bytes(dir + "/plain.h5", table) != table_bytes(dir + "/fw.h5", table))
        throw std::runtime_error(std::string("reco: the plain loop's /") + table + " differs from the framework's");
    all.insert(all.end(), rs.begin(), rs.end());

    const double plain = find(rs, "plain loop", 1, mu).median(), single = find(rs, "heddle-fw single-threaded", 1, mu).median();
    const double procs = find(rs, processes, 2, mu).median();
    std::printf("\n| mu = %g, %llu events | events/s (median) | x two processes | peak RSS MiB | RSS / two processes' |\n"
                "|---|---|---|---|---|\n",
                s.mu, static_cast<unsigned long long>(s.events));
    const double procs_rss = median_rss(rss[processes]);
    std::printf("| %s | %.2f | 1.00 | %.1f | 1.00 |\n", processes.c_str(), double(s.events) / procs, procs_rss / (1 << 20));
    nlohmann::json scan = nlohmann::json::array();
    double worst = 1e9, rss_at_4 = 0;
    for (std::uint64_t f : in_flight) {
      const std::string name = "heddle-fw, " + std::to_string(f) + " in flight";
      const double t = find(rs, name, 2, mu).median(), m = median_rss(rss[name]);
      std::printf("| %s | %.2f | %.3f | %.1f | %.3f |\n", name.c_str(), double(s.events) / t, procs / t, m / (1 << 20), m / procs_rss);
      scan.push_back({{"series", "heddle-fw, 2 workers, mu " + std::to_string(int(s.mu))},
                      {"events_in_flight", f},
                      {"events_per_s", double(s.events) / t},
                      {"peak_rss_mib", m / (1 << 20)}});
      if (f >= 2 && f <= 4) worst = std::min(worst, procs / t);
      if (f == 4 || (opt.check && f == 2)) rss_at_4 = m / procs_rss;
    }
    scan.push_back({{"series", "two single-threaded processes, mu " + std::to_string(int(s.mu))},
                    {"events_in_flight", 2},
                    {"events_per_s", double(s.events) / procs},
                    {"peak_rss_mib", procs_rss / (1 << 20)}});
    extra["tables"]["throughput" + suffix(s.mu)] = scan;
    std::printf("\n");
    const std::string sfx = suffix(s.mu);
    add_ratio(report, "reco_threads_vs_processes" + sfx, worst,
              "mu " + std::to_string(int(s.mu)) + ": heddle-fw's throughput (2 workers, the least of 2, 3 and 4 events in "
              "flight) over two single-threaded processes' (target >= 0.97)");
    add_ratio(report, "reco_rss_vs_processes" + sfx, rss_at_4,
              "mu " + std::to_string(int(s.mu)) + ": heddle-fw's peak RSS (4 in flight) over the two processes' together "
              "(target <= 0.65)");
    add_ratio(report, "reco_overhead_vs_plain_loop" + sfx, single / plain,
              "mu " + std::to_string(int(s.mu)) + ": the single-threaded processor's time over the plain loop's (target <= 1.01)");
  }

  // A timeline of one threaded run (2 workers, 4 in flight), in the tables: --plot draws it.
  {
    const process_config c = config_for(50, dir + "/timeline.h5");
    process p = make_process(c, timing_options{}, nullptr);
    p.finalize();
    timeline t;
    run_options o = options_for(c, opt.pick<std::uint64_t>(4, 12, 16, 16));
    o.threads = 2;
    o.events_in_flight = 4;
    o.record = &t;
    (void)run_threaded(p, o);
    const auto entries = t.entries();
    nlohmann::json rows = nlohmann::json::array();
    for (const timeline_entry& e : entries)
      rows.push_back({{"label", p.spec(e.module).label},
                      {"event", e.event},
                      {"start_s", double(e.start_ns - entries.front().start_ns) * 1e-9},
                      {"end_s", double(e.end_ns - entries.front().start_ns) * 1e-9}});
    extra["tables"]["timeline"] = rows;
  }
  extra["plot_rows"] = false;
  add_suite(report, "reco", all, extra);
  std::filesystem::remove_all(dir);
}

const registration reg{{"reco", 90, "the hep reconstruction job: shape, framework overhead, threads against processes", &run}};

}  // namespace
}  // namespace suite_impl

}  // namespace heddle::bench::reco
