// SPDX-License-Identifier: Apache-2.0
// The framework's configuration: the JSON of the CMS threaded-framework study's test framework,
// read as it is, plus heddle's extensions (docs/fw-config.md). Reading checks everything that can
// be checked without building the graph: syntax, required keys, unknown keys, types, times.
// Every call here is thread-safe: reading a configuration shares nothing that changes; the
// structs are plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/errors.hpp"
#include "heddle/fw/module_base.hpp"
#include "heddle/fw/parameter_set.hpp"

namespace heddle::fw {

// How timing modules wait for their time: as their type says (busy-wait or sleep), or all of them
// one way. `timer` goes through the async timer engine: a waiting module holds no thread.
enum class wait_mode : std::uint8_t { as_configured, busy, sleep, timer };
// The mode's name. Thread-safe.
HEDDLE_EXPORT const char* to_string(wait_mode w) noexcept;
// "busy" | "sleep" | "timer" | "configured"; std::nullopt otherwise. Thread-safe.
HEDDLE_EXPORT std::optional<wait_mode> parse_wait_mode(std::string_view s) noexcept;

// The study's thread types, as its configurations name them, and the kind a built-in module of
// each type is (module_base.hpp).
enum class thread_type : std::uint8_t {
  safe_between_instances,  // ThreadSafeBetweenInstances: a global:: module
  safe_between_modules,    // ThreadSafeBetweenModules: a one:: module, on its own serial queue
  unsafe,                  // ThreadUnsafe: a one:: module on the legacy resource, shared by all such
};
// The study's name of the type. Thread-safe.
HEDDLE_EXPORT const char* to_string(thread_type t) noexcept;

struct product_request {
  std::string label;    // the producer's @label
  std::string product;  // its product instance name ("" is the default instance)
};

struct module_config {
  std::string label;  // @label
  std::string type;   // @type without the "demo::" prefix
  module_role role = module_role::producer;
  thread_type threads = thread_type::safe_between_instances;
  std::vector<product_request> to_get;
  // Time per event, in seconds: event_times[event % size] if present, else average_time (spread
  // deterministically within [min_time, max_time] when both are given, keeping the average).
  std::vector<double> event_times;
  double average_time = 0;
  std::optional<double> min_time, max_time;
  unsigned n_ranges = 1;                  // parallel-for filters
  std::string product_label;              // the instance name of its product (ThreadSafeProducer)
  std::optional<std::int64_t> value;      // ThreadSafeProducer: the value it adds
  std::vector<bool> pass;                 // filters: decision pass[event % size]; empty: always pass
  std::vector<std::string> select_paths;  // output modules: write only events that passed one of these
  std::string where;                      // "process.producers[3]", for messages
  // A registered module type's (registry.hpp), not a built-in one: every key of its entry but
  // "@label", "@type" and "selectEvents". Empty for built-in types, whose keys are read above.
  std::optional<parameter_set> parameters;
};

struct path_config {
  std::string name;
  std::vector<std::string> labels;
};

// The largest values of these settings; a larger one is an error, in the file as on heddle-fw's
// command line, not silently lowered.
inline constexpr unsigned max_threads = 4096;
inline constexpr std::uint64_t max_events_in_flight = 100000000;
inline constexpr unsigned max_idle_spin_us = 1000000;
inline constexpr unsigned max_concurrent_lumis = 1000000;

struct process_config {
  std::string file;   // as given, for messages
  std::string label;  // process.label
  // process.options
  unsigned events_in_flight = 1;              // nSimultaneousEvents
  double busy_wait_scale = 0;                 // busyWaitScaleFactor: busy-wait iterations per second (0: not given;
                                              // required by the study's timing modules only)
  std::optional<unsigned> threads;            // nThreads
  double time_scale = 1;                      // timeScale (extension)
  wait_mode wait = wait_mode::as_configured;  // wait (extension)
  // heddle-fw's other options, in the file (extensions; the command line wins).
  bool single_threaded = false;          // singleThreaded
  bool quiet = false;                    // quiet: no progress bar
  std::string json_file;                 // json: write the report there
  std::string timeline_file;             // timeline: write every module execution there
  std::optional<unsigned> idle_spin_us;  // idleSpinUs
  unsigned concurrent_lumis = 1;         // numberOfConcurrentLuminosityBlocks (CMS's name), >= 1
  // process.source
  std::uint64_t events = 0;                 // iterations (a number or a string of one)
  std::uint64_t events_per_run = 0;         // eventsPerRun (extension), or eventsPerLumi x lumisPerRun; 0: one run
  std::uint64_t events_per_lumi = 0;        // eventsPerLumi (extension); 0: one lumi per run
  std::vector<module_config> modules;       // producers, filters, analyzers (extension), outputs (extension)
  std::vector<module_config> es_producers;  // esProducers (extension): registered condition producer types
  std::string conditions_file;  // esSources' JsonConditionsSource "file", relative to the configuration's folder
  std::vector<path_config> paths;
  std::vector<path_config> end_paths;  // endPaths (extension): output modules
};

// A module parameter set from outside the file (heddle-fw's --set LABEL.PARAMETER=VALUE, or an
// option the file declares in process.commandLine): `target` is "label.parameter" (deeper names
// for nested sets, "label.cuts.ptMin"), `value` the text, read as a JSON value where it is one
// (50, 2.5, true, [1, 2]) and as a string otherwise; `origin` names it in messages ("--set").
struct parameter_override {
  std::string target;
  std::string value;
  std::string origin;
};

// An option a configuration declares for heddle-fw's command line (process.commandLine, a heddle
// extension in the spirit of cmsRun's VarParsing): {"pileup": {"parameter": "mixing.mu", "help":
// "..."}} makes `heddle-fw reco.json --pileup 140` set parameter mu of module 'mixing'.
struct command_line_parameter {
  std::string name;    // the option, without "--"
  std::string target;  // "label.parameter"
  std::string help;
};

// Reads and checks a configuration file; config_error with "FILE:LINE:COL: ..." or
// "FILE: WHERE 'label': ..." on anything wrong. `overrides` are applied, in order, to the modules'
// parameters before they are read (config_error "ORIGIN TARGET: no module labelled 'x' in FILE"
// when one names no module); a parameter the module does not know is then reported as any
// unknown parameter. Thread-safe; blocks reading the file.
HEDDLE_EXPORT process_config load_config(const std::string& path,
                                         const std::vector<parameter_override>& overrides = {});
// The same from text; `file` names it in messages. Thread-safe.
HEDDLE_EXPORT process_config parse_config(std::string_view text, const std::string& file,
                                          const std::vector<parameter_override>& overrides = {});
// The configuration file's text (config_error naming it when it cannot be read). Thread-safe.
HEDDLE_EXPORT std::string read_config_text(const std::string& path);
// The process.commandLine declarations of a configuration's text, checked (config_error naming
// the place); empty when it declares none or is not a configuration (parse_config says why).
// Thread-safe.
HEDDLE_EXPORT std::vector<command_line_parameter> parse_command_line_parameters(std::string_view text,
                                                                                const std::string& file);

}  // namespace heddle::fw
