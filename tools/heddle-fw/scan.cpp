// SPDX-License-Identifier: Apache-2.0
// heddle-fw scan: the study's figures on this machine. Throughput against events in flight for the
// multi-threaded framework, the same with every module ThreadUnsafe, and as many single-threaded
// processes side by side (Figures 3 and 4), with the single-threaded processor as the yardstick;
// and the number of modules running over one event's time (Figure 5). Repetitions interleave the
// variants; medians are reported. Writes DIR/scan.csv, DIR/modules_running.csv, DIR/scan.json and,
// with python3 + matplotlib, DIR/scan.png and DIR/modules_running.png.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "heddle/core/runtime.hpp"
#include "heddle/fw.hpp"
#include "run_command.hpp"
#include "scan_options.hpp"
#include "study.hpp"

extern char** environ;

namespace heddle::fw::tool {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find heddle-fw's own path: " + ec.message());
  return p.string();
}

// `copies` single-threaded processes at once, each processing `events` events: their throughput,
// events/s, the sum of each one's own (events over the wall time of its run, without its start-up:
// reading a 3 MB configuration is no part of processing events).
double processes(const scan_settings& s, std::uint64_t copies, std::uint64_t events) {
  const std::string self = self_path();
  char scale[32], busy[32];
  std::snprintf(scale, sizeof scale, "%.17g", s.time_scale);
  std::snprintf(busy, sizeof busy, "%.17g", s.busy_scale);
  std::vector<pid_t> pids;
  std::vector<std::string> reports;
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  for (std::uint64_t i = 0; i < copies; ++i) {
    reports.push_back(s.out + "/process-" + std::to_string(i) + ".json");
    std::vector<std::string> args{self,           s.config,   "--single-threaded",
                                  "-q",           "--events", std::to_string(events),
                                  "--time-scale", scale,      "--wait",
                                  s.wait,         "--json",   reports.back()};
    if (s.busy_scale > 0) args.insert(args.end(), {"--busy-wait-scale", busy});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid;
    if (int err = posix_spawn(&pid, self.c_str(), &quiet, nullptr, argv.data(), environ))
      throw std::runtime_error(std::string("cannot start a single-threaded process: ") + std::strerror(err));
    pids.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&quiet);
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  if (!ok) throw std::runtime_error("a single-threaded process failed");
  double total = 0;
  for (const std::string& file : reports) {
    std::ifstream in(file);
    total += nlohmann::json::parse(in).at("events_per_s").get<double>();
    std::filesystem::remove(file);
  }
  return total;
}

// One run in this process: its events/s.
double in_process(const process_config& c, const scan_settings& s, bool single, std::uint64_t in_flight,
                  std::uint64_t events, timeline* record = nullptr) {
  process p = make_process(study::with_timing(c, {*study::parse_wait_mode(s.wait), s.time_scale, s.busy_scale}));
  run_options o;
  o.threads = single ? 1 : s.threads;
  o.events_in_flight = in_flight;
  o.events = events;
  o.record = record;
  const run_report r = single ? run_single_threaded(p, o) : run_threaded(p, o);
  return r.events_per_s();
}

// Modules of one event running at each moment: a step function from its timeline entries.
std::vector<std::pair<double, int>> running_over_event(const std::vector<timeline_entry>& entries,
                                                       std::uint64_t event) {
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const timeline_entry& e : entries)
    if (e.event == event) {
      edges.push_back({e.start_ns, +1});
      edges.push_back({e.end_ns, -1});
    }
  std::sort(edges.begin(), edges.end());
  std::vector<std::pair<double, int>> steps;
  if (edges.empty()) return steps;
  int now = 0;
  for (auto [t, d] : edges) {
    now += d;
    steps.push_back({double(t - edges.front().first) * 1e-9, now});
  }
  return steps;
}

std::string plot_python() {
  const char* env = std::getenv("HEDDLE_FW_PYTHON");
  return env && *env ? env : HEDDLE_FW_PYTHON;
}

// The series, each a run per repetition and number of events in flight.
const char* const threaded_name = "heddle, multi-threaded";
const char* const unsafe_name = "heddle, every module ThreadUnsafe";
const char* const processes_name = "single-threaded processes";

struct scan_samples {
  std::vector<double> single;  // the single-threaded processor's events/s, one per repetition
  std::map<std::string, std::map<std::uint64_t, std::vector<double>>> series;  // series -> events in flight -> events/s

  // The median of a series at `in_flight`; 0 where it was not measured.
  double at(const char* name, std::uint64_t in_flight) const {
    auto by_e = series.find(name);
    if (by_e == series.end()) return 0;
    auto it = by_e->second.find(in_flight);
    return it == by_e->second.end() ? 0 : median(it->second);
  }
};

// Every variant, repetitions interleaved, reporting each point on stderr.
scan_samples measure(const process_config& config, const process_config& unsafe, const scan_settings& s) {
  scan_samples m;
  for (int rep = 0; rep < s.reps; ++rep) {
    m.single.push_back(in_process(config, s, true, 1, s.events));
    std::fprintf(stderr, "scan %d/%d: single-threaded %.2f events/s\n", rep + 1, s.reps, m.single.back());
    for (std::uint64_t e : s.in_flight) {
      m.series[threaded_name][e].push_back(in_process(config, s, false, e, s.events));
      m.series[unsafe_name][e].push_back(in_process(unsafe, s, false, e, s.events));
      if (s.processes) m.series[processes_name][e].push_back(processes(s, e, s.events));
      std::fprintf(stderr, "scan %d/%d: %" PRIu64 " in flight: %.2f | %.2f%s events/s\n", rep + 1, s.reps, e,
                   m.series[threaded_name][e].back(), m.series[unsafe_name][e].back(),
                   s.processes ? (" | " + std::to_string(m.series[processes_name][e].back())).c_str() : "");
    }
  }
  return m;
}

// DIR/scan.csv; returns the series' medians (series -> events in flight -> events/s) for scan.json.
nlohmann::json write_scan_csv(const scan_settings& s, const scan_samples& m, double single_rate) {
  std::ofstream csv(s.out + "/scan.csv");
  csv << "series,events_in_flight,threads,events,median_events_per_s,min_events_per_s,max_events_per_s\n";
  for (std::uint64_t e : s.in_flight)
    csv << "single-threaded processor," << e << ",1," << s.events << ',' << single_rate << ','
        << *std::min_element(m.single.begin(), m.single.end()) << ','
        << *std::max_element(m.single.begin(), m.single.end()) << '\n';
  nlohmann::json series = nlohmann::json::object();
  for (auto& [name, by_e] : m.series)
    for (auto& [e, r] : by_e) {
      const double med = median(r);
      csv << '"' << name << "\"," << e << ',' << (name == std::string(processes_name) ? e : s.threads) << ','
          << s.events << ',' << med << ',' << *std::min_element(r.begin(), r.end()) << ','
          << *std::max_element(r.begin(), r.end()) << '\n';
      series[name][std::to_string(e)] = med;
    }
  if (!csv.flush()) throw config_error(s.out + "/scan.csv: cannot write");
  return series;
}

// Figure 5: one event, in the middle of a run, with its modules' timeline, written to
// DIR/modules_running.csv. Returns the modules running on average over the event.
double write_modules_running(const process_config& config, const scan_settings& s) {
  timeline record;
  in_process(config, s, false, s.figure5_in_flight, s.events, &record);
  const auto steps = running_over_event(record.entries(), s.events / 2);
  std::ofstream fig5(s.out + "/modules_running.csv");
  fig5 << "time_s,running\n";
  double area = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    fig5 << steps[i].first << ',' << steps[i].second << '\n';
    if (i + 1 < steps.size()) area += steps[i].second * (steps[i + 1].first - steps[i].first);
  }
  if (!fig5.flush()) throw config_error(s.out + "/modules_running.csv: cannot write");
  return steps.empty() || steps.back().first <= 0 ? 0.0 : area / steps.back().first;
}

// The summary on stdout, the targets as ratios; returns the ratios for scan.json.
nlohmann::json print_summary(const scan_settings& s, const scan_samples& m, double single_rate,
                             const dependency_bound& bound, double modules_running) {
  nlohmann::json ratios;
  std::printf("heddle-fw scan: %s, %" PRIu64 " events, time scale %g, wait %s, %u threads, %d repetitions\n",
              s.config.c_str(), s.events, s.time_scale, s.wait.c_str(), s.threads, s.reps);
  std::printf("  single-threaded processor: %.3f events/s (work %.4f s/event, critical path %.4f s/event)\n",
              single_rate, bound.work_s() / double(s.events), bound.critical_path_s() / double(s.events));
  std::printf("  %-10s %14s %14s %14s %12s %10s %10s\n", "in flight", "multi-thr ev/s", "unsafe ev/s", "processes ev/s",
              "speed-up", "bound", "of bound");
  for (std::uint64_t e : s.in_flight) {
    const double speedup = m.at(threaded_name, e) / single_rate, b = bound.speedup(s.threads, e);
    std::printf("  %-10" PRIu64 " %14.3f %14.3f %14.3f %12.3f %10.3f %9.1f%%\n", e, m.at(threaded_name, e),
                m.at(unsafe_name, e), s.processes ? m.at(processes_name, e) : 0.0, speedup, b, 100 * speedup / b);
    const std::string k = std::to_string(e);
    ratios["speedup_" + k] = speedup;
    ratios["bound_" + k] = b;
    ratios["speedup_vs_bound_" + k] = speedup / b;
    ratios["unsafe_vs_single_" + k] = m.at(unsafe_name, e) / single_rate;
  }
  if (auto it = m.series.find(threaded_name); it != m.series.end())
    if (auto at = it->second.find(s.threads); at != it->second.end())
      ratios["reentrant_vs_threads_x_single"] = median(at->second) / (s.threads * single_rate);
  std::printf("  modules running over event %" PRIu64 " (%" PRIu64 " in flight): %.2f on average\n", s.events / 2,
              s.figure5_in_flight, modules_running);
  for (auto& [k, v] : ratios.items()) std::printf("  %-34s %.4f\n", k.c_str(), v.get<double>());
  return ratios;
}

// The plots (python3 + matplotlib); the CSVs are the results, a missing plotter is a warning.
void plot(const scan_settings& s) {
  const std::string python = plot_python();
  std::vector<std::string> args{python, HEDDLE_FW_PLOT_SCRIPT, s.out};
  std::vector<char*> pargv;
  for (auto& a : args) pargv.push_back(a.data());
  pargv.push_back(nullptr);
  pid_t pid;
  int status = 1;
  if (posix_spawnp(&pid, python.c_str(), nullptr, nullptr, pargv.data(), environ) == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::fprintf(stderr, "heddle-fw scan: warning: no plots (%s %s failed); the CSVs are in %s\n", python.c_str(),
                 HEDDLE_FW_PLOT_SCRIPT, s.out.c_str());
}

void scan(scan_settings& s) {
  const process_config config = load_config(s.config);
  if (s.threads == 0) s.threads = default_thread_count();
  if (s.events == 0) s.events = std::min<std::uint64_t>(config.events, 100);
  // Every timing module ThreadUnsafe: the same file with threadType set in each one's parameters,
  // as --set would (a registered type of another kind keeps its own).
  std::vector<parameter_override> all_unsafe;
  for (const module_config& m : config.modules)
    if (study::is_timing_type(m.type))
      all_unsafe.push_back({m.label + ".threadType", "ThreadUnsafe", "heddle-fw scan"});
  const process_config unsafe = load_config(s.config, all_unsafe);
  std::filesystem::create_directories(s.out);
  const dependency_bound bound = study::analyse_dependencies(config, s.time_scale, s.events);

  const scan_samples m = measure(config, unsafe, s);
  const double single_rate = median(m.single);
  const nlohmann::json series = write_scan_csv(s, m, single_rate);
  const double modules_running = write_modules_running(config, s);
  const nlohmann::json ratios = print_summary(s, m, single_rate, bound, modules_running);

  nlohmann::json out{
      {"config", s.config},   {"events", s.events}, {"time_scale", s.time_scale},         {"wait", s.wait},
      {"threads", s.threads}, {"reps", s.reps},     {"single_events_per_s", single_rate}, {"series", series},
      {"ratios", ratios}};
  std::ofstream json(s.out + "/scan.json");
  json << out.dump(2) << '\n';
  if (!json.flush()) throw config_error(s.out + "/scan.json: cannot write");
  plot(s);
}

}  // namespace

int run_scan(scan_settings s) {
  try {
    scan(s);
    return 0;
  } catch (const config_error& x) {
    std::fprintf(stderr, "heddle-fw scan: error: %s\n", x.what());
    return 2;
  } catch (const module_error& x) {
    std::fprintf(stderr, "heddle-fw scan: error: %s: %s\n", s.config.c_str(), x.what());
    return 1;
  } catch (const std::exception& x) {
    std::fprintf(stderr, "heddle-fw scan: error: %s\n", x.what());
    return 1;
  }
}

int scan_main(int argc, char** argv) {
  scan_settings s;
  if (std::optional<int> rc = parse_scan_arguments(argc, argv, s)) return *rc;
  return run_scan(std::move(s));
}

}  // namespace heddle::fw::tool
