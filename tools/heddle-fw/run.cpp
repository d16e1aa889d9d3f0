// SPDX-License-Identifier: Apache-2.0
// heddle-fw CONFIG: one run, its report on stdout, optionally as JSON and a timeline. The command
// line is read by run_options.cpp; this file runs what it asks for.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "heddle/core/runtime.hpp"
#include "heddle/fw.hpp"
#include "heddle/fw/plugins.hpp"
#include "report.hpp"
#include "run_command.hpp"
#include "run_options.hpp"
#include "trace_option.hpp"

namespace heddle::fw::tool {

namespace {

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
    auto d = std::find_if(declared.begin(), declared.end(),
                          [&](const command_line_parameter& x) { return x.name == name; });
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

// --set's parameters, checked before the file is read.
std::vector<parameter_override> set_overrides(const run_arguments& c) {
  std::vector<parameter_override> overrides;
  for (const std::string& set : c.sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos) throw config_error("--set " + set + ": expected LABEL.PARAMETER=VALUE");
    overrides.push_back({set.substr(0, eq), set.substr(eq + 1), "--set"});
  }
  return overrides;
}

// The file's heddle-fw options, where the command line gave none.
void take_file_options(run_arguments& c, const process_config& config) {
  c.single = c.single || config.single_threaded;
  c.quiet = c.quiet || config.quiet;
  if (c.json_file.empty()) c.json_file = config.json_file;
  if (c.timeline_file.empty()) c.timeline_file = config.timeline_file;
  if (!c.idle_spin_us) c.idle_spin_us = config.idle_spin_us;
}

// The timing of the study's modules (study.hpp): the process options they add, from the file, where
// the command line gave none.
study::timing_options timing_of(const run_arguments& c, const process_config& config) {
  study::timing_options timing = study::timing_of(config.options);
  if (c.time_scale) timing.time_scale = *c.time_scale;
  if (!c.wait.empty()) timing.wait = *study::parse_wait_mode(c.wait);
  if (c.busy_wait_scale > 0) timing.busy_wait_scale = c.busy_wait_scale;
  return timing;
}

// --plugin-path's directories, each option possibly a colon-separated list.
std::vector<std::string> plugin_directories(const run_arguments& c) {
  std::vector<std::string> dirs;
  for (const std::string& list : c.plugin_path)
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t end = std::min(list.find(':', at), list.size());
      if (end > at) dirs.push_back(list.substr(at, end - at));
      at = end + 1;
    }
  return dirs;
}

// The run's options: the command line's, else the configuration's. Its progress, record and idle
// spin are set by the caller.
run_options run_options_of(const run_arguments& c, const process_config& config) {
  run_options options;
  options.threads = c.single ? 1 : c.threads.value_or(config.threads.value_or(0));
  options.events_in_flight = c.single ? 1 : c.in_flight.value_or(config.events_in_flight);
  options.events = c.events.value_or(config.events);
  options.events_per_run = c.per_run.value_or(config.events_per_run);
  options.events_per_lumi = c.per_lumi.value_or(config.events_per_lumi);
  options.concurrent_lumis = c.concurrent_lumis.value_or(config.concurrent_lumis);
  options.first_event = c.first_event;
  return options;
}

void open_output(std::ofstream& out, const std::string& file) {
  if (file.empty()) return;
  out.open(file);
  if (!out) throw config_error(file + ": cannot write");
}

// Reads, builds and runs the job; config_error (and the other errors run_job reports as bad
// input) for what is wrong with it.
int run_checked(run_arguments& c) {
  std::vector<parameter_override> overrides = set_overrides(c);
  const std::string text = read_config_text(c.config);
  for (parameter_override& o : declared_options(c.extras, c.config, text)) overrides.push_back(std::move(o));
  process_config config = parse_config(text, c.config, overrides);
  take_file_options(c, config);
  const study::timing_options timing = timing_of(c, config);
  config = study::with_timing(std::move(config), timing);
  plugin_loader plugins(plugin_directories(c));  // before the process: it outlives the modules it made
  if (auto bundled = bundled_plugin_dir()) plugins.add_directory(*bundled);
  process p = make_process(config, &plugins);
  p.finalize();

  // Outputs first: an unwritable file fails before the run, not after it.
  std::ofstream json_out, timeline_out;
  run_options options = run_options_of(c, config);
  check_run_options(options);  // --first-event with --events past 2^64 - 1: exit 2, before any output is written
  open_output(json_out, c.json_file);
  open_output(timeline_out, c.timeline_file);

  // Spinning pays when modules keep the workers busy and hand each other work; with timer waits
  // the workers are woken by the timer engine, and spinning in between only burns CPU.
  options.idle_spin = std::chrono::microseconds(c.idle_spin_us.value_or(timing.wait == study::wait_mode::timer ? 50
                                                                                                               : 500));
  timeline record;
  if (!c.timeline_file.empty()) options.record = &record;
  progress_bar bar(options.events, !c.quiet && isatty(STDERR_FILENO));
  options.progress = [&bar](std::uint64_t done) { bar.show(done); };

  run_description what{c.config, c.single ? "single-threaded" : "threaded", timing, options, p};
  run_report report;
  heddle::tool::trace_option trace("heddle-fw", c.trace_file);  // throws trace_error: exit 2 in run_job
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
    std::fprintf(stderr, "heddle-fw: error: writing %s failed\n",
                 json_out.is_open() && !json_out ? c.json_file.c_str() : c.timeline_file.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

int run_job(run_arguments c) {
  try {
    return run_checked(c);
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

int run_main(int argc, char** argv) {
  run_arguments c;
  if (std::optional<int> rc = parse_run_arguments(argc, argv, c)) return *rc;
  return run_job(std::move(c));
}

}  // namespace heddle::fw::tool
