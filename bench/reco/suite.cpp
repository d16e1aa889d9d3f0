// SPDX-License-Identifier: Apache-2.0
// The reco suite: the hep reconstruction job (examples/hep/reco.json) at mu = 50 and mu = 140.
//   - its shape: per-module mean times, work and critical path per event, the dependency bound
//     (from a recorded single-threaded run), beside the CMS study's configurations;
//   - the framework's overhead: the single-threaded processor against the same steps in a plain
//     serial loop (plain_loop.hpp), both writing the HDF5 file, whose tables must be equal;
//   - one process of heddle-fw with 2 workers and 1-8 events in flight against two independent
//     single-threaded processes that each run half its events, the first [0, N/2) and the second
//     [N/2, N) (how CMS ran before its framework was threaded), each process started fresh
//     (heddle-reco-job) and measured alike: throughput by wall time and by each process's own
//     event loop, peak PSS sampled from outside (summed over the two processes), each process's
//     own VmHWM;
//   - a timeline of one threaded run (tables: plotted with --plot).
// Every variant's checksum is checked against the single-threaded processor's, or against its own
// other runs, and the two processes' events' checksums add up to the threaded job's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
#include "study.hpp"

namespace heddle::bench::reco {

namespace suite_impl {  // keeps the using-directive below out of the files after this one in a unity build
namespace {

using namespace heddle::fw;

struct scale {
  double mu;
  std::uint64_t events;       // processes against threads, in-flight scan
  std::uint64_t loop_events;  // overhead, shape
};

std::string suffix(double mu) { return mu == 50 ? "" : "_mu" + std::to_string(int(mu)); }

// The seed heddle-reco-job is given (reco.json's): the threaded job's and both processes'.
constexpr std::uint64_t job_seed = 2026;
constexpr double mib = 1 << 20;

// The median of figures measured once a round, as the harness takes it of times.
double median(std::vector<double> v) { return result{"figure", 1, {}, std::move(v)}.median(); }

// This process's peak RSS (VmHWM), for the record: wait4's ru_maxrss of a child it started with
// posix_spawn was at least this (child.hpp), the reason the suite no longer reads it.
double own_vm_hwm_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) * 1024;
  return 0;
}

// A checksum as heddle-reco-job prints it ("%#llx": "0x..." but "0" for 0).
std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

nlohmann::json to_json(const estimate& e) {
  return {{"value", e.value}, {"lo", e.lo}, {"hi", e.hi}, {"rounds", e.rounds}};
}

// "0.982 [0.970, 0.991]", or the value alone without an interval (one round).
std::string interval_text(const estimate& e) {
  char buf[96];
  if (e.has_interval()) std::snprintf(buf, sizeof buf, "%.3f [%.3f, %.3f]", e.value, e.lo, e.hi);
  else std::snprintf(buf, sizeof buf, "%.3f", e.value);
  return buf;
}

// Process `p` of a variant's runs (one a round): its own figures, medians over the rounds, and its
// loop and wall times round by round.
nlohmann::json process_json(const std::vector<child_result>& runs, std::size_t p, std::uint64_t first_event,
                            std::uint64_t events, std::uint64_t seed) {
  std::vector<double> loop, wall, hwm, pss, rss;
  for (const child_result& r : runs) {
    loop.push_back(r.processes[p].loop_s);
    wall.push_back(r.processes[p].wall_s);
    hwm.push_back(r.processes[p].vm_hwm_bytes / mib);
    pss.push_back(r.processes[p].peak_pss_bytes / mib);
    rss.push_back(r.processes[p].sampled_peak_rss_bytes / mib);
  }
  return {{"first_event", first_event},
          {"events", events},
          {"seed", seed},
          {"loop_s", median(loop)},
          {"wall_s", median(wall)},
          {"vm_hwm_mib", median(hwm)},
          {"sampled_peak_rss_mib", median(rss)},
          {"peak_pss_mib", median(pss)},
          {"loop_s_rounds", loop},
          {"wall_s_rounds", wall},
          {"vm_hwm_mib_rounds", hwm}};
}

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
  process p = make_process(c);
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
    if (spec.type == "hep::RhoEstimator" || spec.type == "hep::JetProducer" || spec.type == "hep::FatJetProducer")
      fastjet += mean;
  }
  // Were the FastJet modules behind one shared resource (one at a time), 2 workers could not
  // go beyond one event per FastJet time.
  const double bound2 = b.speedup(2, 4), serialised = std::min(bound2, work / fastjet);
  std::printf(
      "\nWork %.1f ms and critical path %.1f ms per event (parallelism within an event %.2f); dependency bound at 2 "
      "workers: %.2f (1 in flight), %.2f (2), %.2f (4) x the single-threaded processor. FastJet's modules are "
      "%.0f %% of the work: behind one shared resource the bound at 2 workers would be %.2f.\n",
      work * 1e3, critical * 1e3, work / critical, b.speedup(2, 1), b.speedup(2, 2), bound2, 100 * fastjet / work,
      serialised);
  nlohmann::json cms = nlohmann::json::array();
  for (const char* name : {"reco_minbias_busywait.json", "reco_hipileup_5_2_0_busywait_perfectIO.json"}) {
    const std::string path = std::string(HEDDLE_CMS_DATA) + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    const process_config cc = load_config(path);
    const dependency_bound cb = study::analyse_dependencies(cc, 1, 200);
    const double cw = cb.work_s() / 200, cp = cb.critical_path_s() / 200;
    std::printf("The CMS study's %s: %zu modules, work %.1f ms and critical path %.1f ms per event (parallelism within "
                "an event %.2f).\n",
                name, cc.modules.size(), cw * 1e3, cp * 1e3, cw / cp);
    cms.push_back(
        {{"config", name}, {"modules", cc.modules.size()}, {"work_ms", cw * 1e3}, {"critical_path_ms", cp * 1e3}});
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
  std::printf(
      "## reco: the hep reconstruction job (examples/hep/reco.json), heddle-fw against a plain loop and against "
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
  const std::vector<std::uint64_t> in_flight = opt.check ? std::vector<std::uint64_t>{2}
                                                         : std::vector<std::uint64_t>{1, 2, 3, 4, 8};
  nlohmann::json extra = {{"tables", nlohmann::json::object()}};
  std::vector<result> all;
  for (const scale& s : scales) {
    std::uint64_t reference = 0;
    extra["shape" + suffix(s.mu)] = shape(s, dir, reference);

    // The framework against the plain loop, in this process, single-threaded.
    const process_config c = config_for(s.mu, dir + "/fw.h5");
    plain_loop loop(c);
    process fw_process = make_process(c);
    fw_process.finalize();
    const std::string mu = "mu=" + std::to_string(int(s.mu));
    std::vector<variant> vs;
    vs.push_back({"plain loop", 1, mu, [&] {
                    return timed(
                        [&] { return loop.run(s.loop_events, c.events_per_lumi, c.events_per_run, dir + "/plain.h5"); },
                        [](std::uint64_t) {});
                  }});
    vs.push_back({"heddle-fw single-threaded", 1, mu, [&] {
                    return timed(
                        [&] { return run_single_threaded(fw_process, options_for(c, s.loop_events)).checksum; },
                        expect_equal(reference, "reco: the single-threaded processor"));
                  }});

    // One threaded process against two single-threaded ones, each started fresh, as children of
    // this process, so that both sides are measured alike: wall time from start to exit, each
    // process's event loop as it timed it, and memory as this process samples it (child.hpp).
    // The events: the threaded job runs events 0 .. N-1 with the job's seed; the processes, with
    // the same seed, run 0 .. N/2-1 and N/2 .. N-1 (--first-event, run_options::first_event):
    // exactly the threaded job's two halves, each event with its numbers, so the same products (an
    // event's depend only on the seeds and its numbers), and the same work.
    std::map<std::string, std::vector<child_result>> measured;  // by variant, a run each (the warm-up first)
    std::string process_checksums;
    auto job_args = [&](std::uint64_t first, std::uint64_t events, const std::string& out) {
      return std::vector<std::string>{job,        HEP_RECO_CONFIG,          "--first-event", std::to_string(first),
                                      "--events", std::to_string(events),   "--mu",          std::to_string(s.mu),
                                      "--seed",   std::to_string(job_seed), "--out",         out};
    };
    const std::uint64_t first_half = s.events / 2, second_half = s.events - s.events / 2;
    const std::string processes = "two processes, half the events each";
    vs.push_back({processes, 2, mu, [&, processes] {
                    auto a = job_args(0, first_half, dir + "/a.h5"),
                         b = job_args(first_half, second_half, dir + "/b.h5");
                    a.push_back("--single-threaded");
                    b.push_back("--single-threaded");
                    child_result r = run_children({a, b});
                    const std::string sums = r.processes[0].checksum + r.processes[1].checksum;
                    if (!process_checksums.empty() && sums != process_checksums)
                      throw std::runtime_error("reco: the processes' checksums changed between runs");
                    if (r.processes[0].events != first_half || r.processes[1].events != second_half)
                      throw std::runtime_error("reco: the processes ran other numbers of events than asked");
                    process_checksums = sums;
                    const double wall = r.wall_s;
                    measured[processes].push_back(std::move(r));
                    return wall;
                  }});
    std::string threaded_checksum;
    auto threaded_name = [](std::uint64_t f) { return "heddle-fw, " + std::to_string(f) + " in flight"; };
    for (std::uint64_t f : in_flight) {
      const std::string name = threaded_name(f);
      vs.push_back({name, 2, mu, [&, f, name] {
                      auto a = job_args(0, s.events, dir + "/t.h5");
                      a.insert(a.end(), {"--threads", "2", "--in-flight", std::to_string(f)});
                      child_result r = run_children({a});
                      const std::string& sum = r.processes[0].checksum;
                      if (!threaded_checksum.empty() && sum != threaded_checksum)
                        throw std::runtime_error("reco: " + name + ": checksum " + sum + ", another run " +
                                                 threaded_checksum);
                      if (r.processes[0].events != s.events)
                        throw std::runtime_error("reco: " + name + " ran other events than asked");
                      threaded_checksum = sum;
                      const double wall = r.wall_s;
                      measured[name].push_back(std::move(r));
                      return wall;
                    }});
    }
    const std::vector<result> rs = run_interleaved(vs, opt.reps);
    // The plain loop wrote the same tables as the framework.
    for (const char* table : {"events", "jets", "fat_jets"})
      if (table_bytes(dir + "/plain.h5", table) != table_bytes(dir + "/fw.h5", table))
        throw std::runtime_error(std::string("reco: the plain loop's /") + table + " differs from the framework's");
    all.insert(all.end(), rs.begin(), rs.end());
    // The two processes ran the threaded job's events between them: their events' checksum shares
    // add up to its (modulo 2^64) in every run. Their whole checksums are checked too where N/2 is a
    // run boundary (--full): a lumi split between them has its products (JetHistograms') made by
    // each from its own events, as a run would its run products (run_report::checksum).
    const std::uint64_t threaded_events_checksum =
        measured[threaded_name(in_flight.front())].front().processes[0].events_checksum;
    const bool at_run_boundary = c.events_per_run != 0 && first_half % c.events_per_run == 0;
    for (const child_result& r : measured[processes]) {
      const std::uint64_t sum = r.processes[0].events_checksum + r.processes[1].events_checksum;
      if (sum != threaded_events_checksum)
        throw std::runtime_error("reco: the two processes' events checksums add up to " + hex(sum) +
                                 ", the threaded job's is " + hex(threaded_events_checksum));
      if (at_run_boundary && hex(std::stoull(r.processes[0].checksum, nullptr, 16) +
                                 std::stoull(r.processes[1].checksum, nullptr, 16)) != threaded_checksum)
        throw std::runtime_error("reco: the two processes' checksums do not add up to the threaded job's " +
                                 threaded_checksum);
    }
    for (std::uint64_t f : in_flight)
      for (const child_result& r : measured[threaded_name(f)])
        if (r.processes[0].events_checksum != threaded_events_checksum)
          throw std::runtime_error("reco: " + threaded_name(f) + ": events checksum " +
                                   hex(r.processes[0].events_checksum) + ", another run " +
                                   hex(threaded_events_checksum));
    // The warm-up's measurements out: measured[v][i] is then round i's, as find(rs, v).samples[i].
    for (auto& [name, runs] : measured) {
      if (runs.size() != std::size_t(opt.reps) + 1)
        throw std::logic_error("reco: " + name + ": runs and rounds differ");
      runs.erase(runs.begin());
    }

    // Per round: the throughput ratio from the wall times (the same events on both sides, so the
    // processes' time over the threaded job's), the same from the event loops' times (the
    // processes' rates summed: they run side by side), and the peak PSS ratio.
    const result& procs = find(rs, processes, 2, mu);
    const std::vector<child_result>& procs_m = measured[processes];
    auto per_round = [&](const std::string& name, auto f) {
      std::vector<double> v;
      for (std::size_t i = 0; i < procs_m.size(); ++i) v.push_back(f(measured[name][i], procs_m[i]));
      return median_with_interval(std::move(v));
    };
    auto loop_rate = [](const child_result& r) {
      double rate = 0;
      for (const process_result& p : r.processes) rate += double(p.events) / p.loop_s;
      return rate;
    };
    auto column = [](const std::vector<child_result>& runs, auto f) {
      std::vector<double> v;
      for (const child_result& r : runs) v.push_back(f(r));
      return median(std::move(v));
    };
    auto pss_mib = [](const child_result& r) { return r.peak_pss_bytes / mib; };
    auto anon_mib = [](const child_result& r) { return r.peak_anon_bytes / mib; };
    auto hwm_mib = [](const child_result& r, std::size_t p) { return r.processes[p].vm_hwm_bytes / mib; };

    std::printf(
        "\n| mu = %g, %llu events | events/s (wall) | x two processes (wall) | x two processes (loop) | peak PSS MiB "
        "(anon) | PSS / two processes' | VmHWM MiB |\n|---|---|---|---|---|---|---|\n",
        s.mu, static_cast<unsigned long long>(s.events));
    std::printf("| %s | %.2f | 1 | 1 | %.1f (%.1f) | 1 | %.1f + %.1f |\n", processes.c_str(),
                double(s.events) / procs.median(), column(procs_m, pss_mib), column(procs_m, anon_mib),
                column(procs_m, [&](const child_result& r) { return hwm_mib(r, 0); }),
                column(procs_m, [&](const child_result& r) { return hwm_mib(r, 1); }));
    nlohmann::json scan = nlohmann::json::array(), variants_json = nlohmann::json::array();
    std::map<std::uint64_t, estimate> throughput, pss_ratio;
    for (std::uint64_t f : in_flight) {
      const std::string name = threaded_name(f);
      const result& t = find(rs, name, 2, mu);
      const std::vector<child_result>& m = measured[name];
      throughput[f] = paired(procs, t, [](double p, double th) { return p / th; });
      const estimate by_loop = per_round(name, [&](const child_result& th, const child_result& p) {
        return loop_rate(th) / loop_rate(p);
      });
      pss_ratio[f] = per_round(name, [](const child_result& th, const child_result& p) {
        return th.peak_pss_bytes / p.peak_pss_bytes;
      });
      // The anonymous memory alone: no library pages, so nothing split with this process (which
      // maps FastJet and HDF5 too) or any other.
      const estimate anon_ratio = per_round(name, [](const child_result& th, const child_result& p) {
        return th.peak_anon_bytes / p.peak_anon_bytes;
      });
      std::printf("| %s | %.2f | %s | %s | %.1f (%.1f) | %s | %.1f |\n", name.c_str(), double(s.events) / t.median(),
                  interval_text(throughput[f]).c_str(), interval_text(by_loop).c_str(), column(m, pss_mib),
                  column(m, anon_mib), interval_text(pss_ratio[f]).c_str(),
                  column(m, [&](const child_result& r) { return hwm_mib(r, 0); }));
      scan.push_back({{"series", "heddle-fw, 2 workers, mu " + std::to_string(int(s.mu))},
                      {"events_in_flight", f},
                      {"events_per_s", double(s.events) / t.median()},
                      {"peak_pss_mib", column(m, pss_mib)}});
      variants_json.push_back({{"variant", name},
                               {"events_per_s_wall", double(s.events) / t.median()},
                               {"events_per_s_loop", column(m, loop_rate)},
                               {"throughput_vs_processes_wall", to_json(throughput[f])},
                               {"throughput_vs_processes_loop", to_json(by_loop)},
                               {"peak_pss_mib", column(m, pss_mib)},
                               {"peak_anon_mib", column(m, anon_mib)},
                               {"pss_vs_processes", to_json(pss_ratio[f])},
                               {"anon_vs_processes", to_json(anon_ratio)},
                               {"processes", {process_json(m, 0, 0, s.events, job_seed)}}});
    }
    scan.push_back({{"series", "two single-threaded processes, mu " + std::to_string(int(s.mu))},
                    {"events_in_flight", 2},
                    {"events_per_s", double(s.events) / procs.median()},
                    {"peak_pss_mib", column(procs_m, pss_mib)}});
    variants_json.push_back({{"variant", processes},
                             {"events_per_s_wall", double(s.events) / procs.median()},
                             {"events_per_s_loop", column(procs_m, loop_rate)},
                             {"peak_pss_mib", column(procs_m, pss_mib)},
                             {"peak_anon_mib", column(procs_m, anon_mib)},
                             {"processes",
                              {process_json(procs_m, 0, 0, first_half, job_seed),
                               process_json(procs_m, 1, first_half, second_half, job_seed)}}});
    extra["tables"]["throughput" + suffix(s.mu)] = scan;
    extra["threads_vs_processes" + suffix(s.mu)] = {
        {"events", s.events},
        {"heddle_bench_vm_hwm_mib", own_vm_hwm_bytes() / mib},
        {"pss_sample_every_ms", pss_sample_every.count()},
        {"pss_samples_median", column(procs_m, [](const child_result& r) { return double(r.samples); })},
        {"variants", variants_json}};

    // Each process's own figures: its loop as it timed it against its life as this process saw it
    // (the difference: starting, loading the libraries, the event library and the conditions).
    std::printf("\n| mu = %g: each process (medians, seed %llu) | events | loop s | wall s (start to exit) | VmHWM MiB "
                "| sampled peak "
                "RSS MiB | own peak PSS MiB |\n|---|---|---|---|---|---|---|\n",
                s.mu, static_cast<unsigned long long>(job_seed));
    auto process_row = [&](const std::string& label, const std::vector<child_result>& m, std::size_t p,
                           std::uint64_t first, std::uint64_t events) {
      const nlohmann::json j = process_json(m, p, first, events, job_seed);
      std::printf("| %s | %llu-%llu | %.3f | %.3f | %.1f | %.1f | %.1f |\n", label.c_str(),
                  static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + events - 1),
                  j["loop_s"].get<double>(), j["wall_s"].get<double>(), j["vm_hwm_mib"].get<double>(),
                  j["sampled_peak_rss_mib"].get<double>(), j["peak_pss_mib"].get<double>());
    };
    process_row("process 1 of 2 (the threaded job's first half)", procs_m, 0, 0, first_half);
    process_row("process 2 of 2 (its second half)", procs_m, 1, first_half, second_half);
    for (std::uint64_t f : in_flight) process_row(threaded_name(f), measured[threaded_name(f)], 0, 0, s.events);
    std::printf("\nPSS sampled every %lld ms (median %.0f samples a run of the two processes); heddle-bench's own "
                "VmHWM %.1f MiB "
                "(wait4's ru_maxrss of a child it spawns is at least this).\n\n",
                static_cast<long long>(pss_sample_every.count()),
                column(procs_m, [](const child_result& r) { return double(r.samples); }), own_vm_hwm_bytes() / mib);

    // The headlines: throughput at the worst of 2, 3 and 4 in flight (by the median); memory at 4
    // (the configuration's nSimultaneousEvents; 2 with --check).
    const std::string sfx = suffix(s.mu), at_mu = "mu " + std::to_string(int(s.mu)) + ": ";
    std::uint64_t worst = 0;
    for (std::uint64_t f : in_flight)
      if (f >= 2 && f <= 4 && (worst == 0 || throughput[f].value < throughput[worst].value)) worst = f;
    const std::uint64_t memory_at = opt.check ? 2 : 4;
    add_figure(
        report, "reco_throughput_threads_vs_processes" + sfx, throughput[worst],
        at_mu + "heddle-fw's events/s (2 workers, " + std::to_string(worst) +
            " in flight: the least of 2, 3 and 4) over two single-threaded processes' together, wall time from start "
            "to exit, per round",
        at_least(0.97));
    add_figure(report, "reco_pss_threads_vs_processes" + sfx, pss_ratio[memory_at],
               at_mu + "heddle-fw's peak PSS (" + std::to_string(memory_at) +
                   " in flight) over the two processes' peak summed PSS, sampled every " +
                   std::to_string(pss_sample_every.count()) + " ms, per round",
               at_most(0.65));
    add_figure(report, "reco_overhead_vs_plain_loop" + sfx,
               paired_ratio(find(rs, "heddle-fw single-threaded", 1, mu), find(rs, "plain loop", 1, mu)),
               at_mu + "the single-threaded processor's time over the plain loop's, per round", at_most(1.01));
  }

  // A timeline of one threaded run (2 workers, 4 in flight), in the tables: --plot draws it.
  {
    const process_config c = config_for(50, dir + "/timeline.h5");
    process p = make_process(c);
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

const registration reg{
    {"reco", 90, "the hep reconstruction job: shape, framework overhead, threads against processes", &run}};

}  // namespace
}  // namespace suite_impl

}  // namespace heddle::bench::reco
