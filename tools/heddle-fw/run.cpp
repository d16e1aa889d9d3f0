// heddle-fw CONFIG: one run, its report on stdout, optionally as JSON and a timeline.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "heddle/core/runtime.hpp"
#include "heddle/fw.hpp"
#include "heddle/fw/plugins.hpp"
#include "numeric_options.hpp"
#include "report.hpp"
#include "run_command.hpp"
#include "trace_option.hpp"

namespace heddle::fw::tool {

namespace {

struct cli {
  std::string config;
  std::optional<unsigned> threads;
  std::optional<std::uint64_t> in_flight, events, per_run, per_lumi;
  std::uint64_t first_event = 0;
  std::optional<unsigned> concurrent_lumis;
  std::optional<double> time_scale;
  std::optional<unsigned> idle_spin_us;
  std::string wait, busy_scale = "config";
  bool single = false, quiet = false;
  std::string json_file, timeline_file, trace_file;
  std::vector<std::string> plugin_path;
  std::vector<std::string> sets;  // --set LABEL.PARAMETER=VALUE
};

// The configuration's own options (process.commandLine), from what CLI11 left over:
// "--name VALUE" or "--name=VALUE". Throws config_error for an option neither declares.
std::vector<parameter_override> declared_options(const std::vector<std::string>& rest, const std::string& config_file,
                                                 const std::string& text) {
  const std::vector<command_line_parameter> declared = parse_command_line_parameters(text, config_file);
  auto known = [&] {
    std::string list;
    for (const command_line_parameter& d : declared) list += (list.empty() ? "--" : ", --") + d.name;
    return list.empty() ? std::string(" (it declares none: process.commandLine)") : " (it declares " + list + ")";
  };
  std::vector<parameter_override> out;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const std::string& arg = rest[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      throw config_error("unexpected argument '" + arg + "' (heddle-fw --help lists the options)");
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    auto d = std::find_if(declared.begin(), declared.end(), [&](const command_line_parameter& x) { return x.name == name; });
    if (d == declared.end())
      throw config_error("unknown option --" + name + ": neither heddle-fw's nor " + config_file + "'s" + known());
    std::string value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    else if (i + 1 < rest.size()) value = rest[++i];
    else throw config_error("option --" + name + " needs a value");
    out.push_back({d->target, value, "--" + name});
  }
  return out;
}

// The plugins built or installed with this heddle-fw: <its folder>/../<libdir>/heddle/plugins,
// where it exists.
std::optional<std::string> bundled_plugin_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  const std::filesystem::path dir = exe.parent_path().parent_path() / HEDDLE_FW_PLUGIN_SUBDIR;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  return dir.lexically_normal().string();
}

}  // namespace

double busy_wait_scale_option(const std::string& s) {
  if (s == "config") return 0;
  if (s == "auto") return calibrate_busy_wait();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !std::isfinite(v) || !(v > 0))
    throw CLI::ValidationError("--busy-wait-scale", "expected config, auto or a finite number greater than 0, not '" + s + "'");
  return v;
}

int run_main(int argc, char** argv) {
  CLI::App app{"heddle-fw: the event-processing framework on a CMS threaded-framework configuration"};
  app.name("heddle-fw");
  app.footer(
      "Commands:\n  heddle-fw scan CONFIG  throughput against events in flight, modules running over an event (CSV, PNG)\n"
      "  heddle-fw generate     a CMS-like configuration with the statistics of the real ones\n"
      "  heddle-fw calibrate    busy-wait iterations per second on this machine\n"
      "Exit status: 0 done, 1 a module failed (the run stopped cleanly), 2 bad input.");
  cli c;
  app.add_option("config", c.config, "configuration file (JSON)")->required();
  app.add_option("--threads", c.threads, "worker threads (default: nThreads, else one per core)")
      ->check(heddle::tool::whole_number(1, max_threads));
  app.add_option("--events-in-flight", c.in_flight, "events processed at once (default: nSimultaneousEvents)")
      ->check(heddle::tool::whole_number(1, max_events_in_flight));
  app.add_option("--events", c.events, "events to process (default: source.iterations)")
      ->check(heddle::tool::whole_number(1, UINT64_MAX));
  app.add_option("--first-event", c.first_event,
                 "the first event's number (default 0): events K.. with the runs, lumis and products they have in a "
                 "job from 0, so --events K and --first-event K run the two parts of one job")
      ->check(heddle::tool::whole_number(0, UINT64_MAX));
  app.add_option("--events-per-run", c.per_run, "events per run (default: source.eventsPerRun, else one run)")
      ->check(heddle::tool::whole_number(1, UINT64_MAX));
  app.add_option("--events-per-lumi", c.per_lumi,
                 "events per luminosity block (default: source.eventsPerLumi, else one lumi per run)")
      ->check(heddle::tool::whole_number(1, UINT64_MAX));
  app.add_option("--concurrent-lumis", c.concurrent_lumis,
                 "luminosity blocks open at once (default: numberOfConcurrentLuminosityBlocks, else 1)")
      ->check(heddle::tool::whole_number(1, max_concurrent_lumis));
  app.add_option("--time-scale", c.time_scale, "multiplies every module time (default: options.timeScale, else 1)")
      ->check(heddle::tool::real_number(false));
  app.add_option("--wait", c.wait, "how timing modules wait: busy, sleep, timer (no thread held) or configured")
      ->check(CLI::IsMember({"busy", "sleep", "timer", "configured"}));
  app.add_option("--busy-wait-scale", c.busy_scale,
                 "busy-wait iterations per second: config (busyWaitScaleFactor), auto (calibrate first) or a number");
  app.add_flag("--single-threaded", c.single, "the single-threaded reference processor");
  app.add_option("--json", c.json_file, "write the report as JSON to FILE");
  app.add_option("--timeline", c.timeline_file, "write every module execution (CSV: module,label,event,start_s,end_s)");
  app.add_option("--idle-spin-us", c.idle_spin_us,
                 "how long an idle worker looks for work before it sleeps (default 500, 50 with --wait timer)")
      ->check(heddle::tool::whole_number(0, max_idle_spin_us));
  app.add_flag("-q,--quiet", c.quiet, "no progress bar");
  app.add_option("--plugin-path", c.plugin_path,
                 "plugin directories (DIR[:DIR...], repeatable), searched before HEDDLE_FW_PLUGIN_PATH's for module types, "
                 "and those before the plugins installed with heddle-fw");
  app.add_option("--trace", c.trace_file, "record a trace of the run into FILE (Chrome trace-event JSON; heddle-trace reads it)");
  app.add_option("--set", c.sets, "set a module's parameter: LABEL.PARAMETER=VALUE (repeatable; VALUE a JSON value or text)");
  // The configuration may declare options of its own (process.commandLine): --pileup 140.
  app.allow_extras();
  double busy_scale = 0;
  try {
    app.parse(argc, argv);
    busy_scale = busy_wait_scale_option(c.busy_scale);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    std::vector<parameter_override> overrides;
    for (const std::string& set : c.sets) {
      const std::size_t eq = set.find('=');
      if (eq == std::string::npos) throw config_error("--set " + set + ": expected LABEL.PARAMETER=VALUE");
      overrides.push_back({set.substr(0, eq), set.substr(eq + 1), "--set"});
    }
    const std::string text = read_config_text(c.config);
    for (parameter_override& o : declared_options(app.remaining(), c.config, text)) overrides.push_back(std::move(o));
    const process_config config = parse_config(text, c.config, overrides);
    // The file's heddle-fw options, where the command line gave none.
    c.single = c.single || config.single_threaded;
    c.quiet = c.quiet || config.quiet;
    if (c.json_file.empty()) c.json_file = config.json_file;
    if (c.timeline_file.empty()) c.timeline_file = config.timeline_file;
    if (!c.idle_spin_us) c.idle_spin_us = config.idle_spin_us;
    timing_options timing;
    timing.time_scale = c.time_scale.value_or(config.time_scale);
    timing.wait = c.wait.empty() ? config.wait : *parse_wait_mode(c.wait);
    timing.busy_wait_scale = busy_scale;
    std::vector<std::string> dirs;  // --plugin-path's, each possibly a colon-separated list
    for (const std::string& list : c.plugin_path)
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(':', at), list.size());
        if (end > at) dirs.push_back(list.substr(at, end - at));
        at = end + 1;
      }
    plugin_loader plugins(std::move(dirs));  // before the process: it outlives the modules it made
    if (auto bundled = bundled_plugin_dir()) plugins.add_directory(*bundled);
    process p = make_process(config, timing, &plugins);
    p.finalize();

    // Outputs first: an unwritable file fails before the run, not after it.
    std::ofstream json_out, timeline_out;
    auto open = [](std::ofstream& out, const std::string& file) {
      if (file.empty()) return;
      out.open(file);
      if (!out) throw config_error(file + ": cannot write");
    };
    run_options options;
    options.threads = c.single ? 1 : c.threads.value_or(config.threads.value_or(0));
    options.events_in_flight = c.single ? 1 : c.in_flight.value_or(config.events_in_flight);
    options.events = c.events.value_or(config.events);
    options.events_per_run = c.per_run.value_or(config.events_per_run);
    options.events_per_lumi = c.per_lumi.value_or(config.events_per_lumi);
    options.concurrent_lumis = c.concurrent_lumis.value_or(config.concurrent_lumis);
    options.first_event = c.first_event;
    check_run_options(options);  // --first-event with --events past 2^64 - 1: exit 2, before any output is written
    open(json_out, c.json_file);
    open(timeline_out, c.timeline_file);

    // Spinning pays when modules keep the workers busy and hand each other work; with timer waits
    // the workers are woken by the timer engine, and spinning in between only burns CPU.
    options.idle_spin = std::chrono::microseconds(c.idle_spin_us.value_or(timing.wait == wait_mode::timer ? 50 : 500));
    timeline record;
    if (!c.timeline_file.empty()) options.record = &record;
    progress_bar bar(options.events, !c.quiet && isatty(STDERR_FILENO));
    options.progress = [&bar](std::uint64_t done) { bar.show(done); };

    run_description what{c.config, c.single ? "single-threaded" : "threaded", timing, options, p};
    run_report report;
    heddle::tool::trace_option trace("heddle-fw", c.trace_file);  // throws trace_error: exit 2 below
    try {
      report = c.single ? run_single_threaded(p, options) : run_threaded(p, options);
    } catch (const module_error& x) {
      bar.clear();
      std::fprintf(stderr, "heddle-fw: error: %s: %s\n", c.config.c_str(), x.what());
      return 1;  // trace's destructor writes the trace: it shows where the run failed
    }
    bar.clear();
    if (!trace.finish()) return 1;
    print_report(stdout, what, report);
    if (json_out.is_open()) json_out << report_json(what, report).dump(2) << '\n';
    if (timeline_out.is_open()) write_timeline(timeline_out, p, record);
    if ((json_out.is_open() && !json_out) || (timeline_out.is_open() && !timeline_out)) {
      std::fprintf(stderr, "heddle-fw: error: writing %s failed\n", json_out.is_open() && !json_out ? c.json_file.c_str() : c.timeline_file.c_str());
      return 2;
    }
    return 0;
  } catch (const config_error& x) {
    std::fprintf(stderr, "heddle-fw: error: %s\n", x.what());
    return 2;
  } catch (const heddle::configuration_error& x) {  // a bad HEDDLE_NUM_THREADS
    std::fprintf(stderr, "heddle-fw: error: %s\n", x.what());
    return 2;
  } catch (const heddle::trace::trace_error& x) {  // --trace FILE cannot be written
    std::fprintf(stderr, "heddle-fw: error: --trace: %s\n", x.what());
    return 2;
  }
}

}  // namespace heddle::fw::tool
