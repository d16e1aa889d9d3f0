// SPDX-License-Identifier: Apache-2.0
// The framework's configuration: the JSON of the CMS threaded-framework study's test framework,
// read as it is, plus heddle's extensions (docs/fw-config.md). Reading checks the file's syntax and
// the framework's own keys (options, source, lists, paths); each module's keys are its parameters,
// which the module checks as make_process builds it (process.hpp). Every call here is thread-safe
// but set_option's: reading a configuration shares nothing that changes; the structs are plain values.
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

// A module's (or a condition producer's) entry of the configuration: where it is, its type, and
// the parameters its constructor reads (registry.hpp). Every type is registered: the CMS study's
// timing modules too, by the built-in plugin that heddle-fw and the framework's tests link
// (src/fw/study/, docs/fw.md).
struct module_config {
  std::string label;  // @label
  std::string type;   // @type, as the file writes it ("demo::BusyWaitProducer", "hep::JetProducer")
  module_role role = module_role::producer;  // the list it is in: producers, filters, analyzers, outputs
  std::vector<std::string> select_paths;     // output modules: write only events that passed one of these
  std::string where;                         // "process.producers[3]", for messages
  // Every key of its entry but "@label", "@type" and (for outputs and analyzers) "selectEvents":
  // the module reads them, and the process reports those it did not (make_process).
  parameter_set parameters;
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
  unsigned events_in_flight = 1;    // nSimultaneousEvents
  std::optional<unsigned> threads;  // nThreads
  // heddle-fw's other options, in the file (extensions; the command line wins).
  bool single_threaded = false;          // singleThreaded
  bool quiet = false;                    // quiet: no progress bar
  std::string json_file;                 // json: write the report there
  std::string timeline_file;             // timeline: write every module execution there
  std::optional<unsigned> idle_spin_us;  // idleSpinUs
  unsigned concurrent_lumis = 1;         // numberOfConcurrentLuminosityBlocks (CMS's name), >= 1
  // The keys of process.options that module types add beside the framework's own, as the file
  // gives them (checked), for the modules that read them (module_context::options): the study's
  // timing modules add busyWaitScaleFactor (busy-wait iterations per second), timeScale and wait
  // (docs/fw-config.md). where() is "FILE: process.options". set_option changes one.
  parameter_set options;
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
// Sets the added option `name` of process.options (process_config::options: a key that a module
// type adds, such as the study's timeScale) to `value`, read as --set reads a value (a JSON value
// where the text is one, 2.5 or true, else the text as a string) and checked as the option's
// registration says; what the file gave is replaced, as a command line's option wins over the
// file's. config_error "ORIGIN: FILE: process.options.NAME: why" for a bad value, "ORIGIN: unknown
// option 'NAME' (added options: ...)" for a name that no type adds. Thread-safe for distinct
// configurations (it changes `config`).
HEDDLE_EXPORT void set_option(process_config& config, const std::string& name, const std::string& value,
                              const std::string& origin);
// The configuration file's text (config_error naming it when it cannot be read). Thread-safe.
HEDDLE_EXPORT std::string read_config_text(const std::string& path);
// The process.commandLine declarations of a configuration's text, checked (config_error naming
// the place); empty when it declares none or is not a configuration (parse_config says why).
// Thread-safe.
HEDDLE_EXPORT std::vector<command_line_parameter> parse_command_line_parameters(std::string_view text,
                                                                                const std::string& file);

}  // namespace heddle::fw
