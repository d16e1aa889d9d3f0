// SPDX-License-Identifier: Apache-2.0
// heddle-fw CONFIG's command line (run_options.hpp): heddle-fw's options, with CLI11.
#include <CLI/CLI.hpp>

#include <cmath>
#include <optional>
#include <string>

#include "heddle/fw.hpp"
#include "numeric_options.hpp"
#include "run_command.hpp"
#include "run_options.hpp"

namespace heddle::fw::tool {

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
    throw CLI::ValidationError("--busy-wait-scale",
                               "expected config, auto or a finite number greater than 0, not '" + s + "'");
  return v;
}

std::optional<int> parse_run_arguments(int argc, char** argv, run_arguments& c) {
  CLI::App app{"heddle-fw: the event-processing framework on a CMS threaded-framework configuration"};
  app.name("heddle-fw");
  app.footer("Commands:\n  heddle-fw scan CONFIG  throughput against events in flight, modules running over an event "
             "(CSV, PNG)\n"
             "  heddle-fw generate     a CMS-like configuration with the statistics of the real ones\n"
             "  heddle-fw calibrate    busy-wait iterations per second on this machine\n"
             "  heddle-fw overhead CONFIG  the processors' own cost per module execution at zero module time\n"
             "Exit status: 0 done, 1 a module failed (the run stopped cleanly), 2 bad input.");
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
  app.add_option(
      "--plugin-path", c.plugin_path,
      "plugin directories (DIR[:DIR...], repeatable), searched before HEDDLE_FW_PLUGIN_PATH's for module types, "
      "and those before the plugins installed with heddle-fw");
  app.add_option("--trace", c.trace_file,
                 "record a trace of the run into FILE (Chrome trace-event JSON; heddle-trace reads it)");
  app.add_option("--set", c.sets,
                 "set a module's parameter: LABEL.PARAMETER=VALUE (repeatable; VALUE a JSON value or text)");
  // The configuration may declare options of its own (process.commandLine): --pileup 140.
  app.allow_extras();
  try {
    app.parse(argc, argv);
    c.busy_wait_scale = busy_wait_scale_option(c.busy_scale);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  c.extras = app.remaining();
  return std::nullopt;
}

}  // namespace heddle::fw::tool
