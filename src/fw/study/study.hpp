// SPDX-License-Identifier: Apache-2.0
// The CMS threaded-framework study's timing modules: a built-in plugin of heddle-fw and of the
// framework's tests, outside the framework library. Its 23 module types register as any plugin's
// do (registry.hpp), each under its name and under the study's spelling "demo::NAME"; its options
// busyWaitScaleFactor, timeScale and wait are process options it adds (config_keys.hpp,
// set_option). Each module spends its time for the event (busy-wait, sleep, or a timer that holds
// no thread) and makes a deterministic integer product from the products it reads, or, as a
// filter, decides by its pass pattern (docs/fw-config.md, "The study's timing modules").
//
// This header is what heddle-fw and the tests use beside the registrations: the settings of an
// entry, the timing options, the dependency bound. Every call is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heddle/fw/analysis.hpp"
#include "heddle/fw/config.hpp"
#include "heddle/fw/registry.hpp"
#include "module_types.hpp"

namespace heddle::fw::study {

// How timing modules wait for their time: as their type says (busy-wait or sleep), or all of them
// one way. `timer` goes through the async timer engine: a waiting module holds no thread.
enum class wait_mode : std::uint8_t { as_configured, busy, sleep, timer };
// The mode's name: "configured" | "busy" | "sleep" | "timer".
const char* to_string(wait_mode w) noexcept;
// The mode of that name; std::nullopt for another.
std::optional<wait_mode> parse_wait_mode(std::string_view s) noexcept;

// The study's thread types, as its configurations name them (threadType), and the kind a timing
// module of each type is (module_base.hpp).
enum class thread_type : std::uint8_t {
  safe_between_instances,  // ThreadSafeBetweenInstances: a global:: module
  safe_between_modules,    // ThreadSafeBetweenModules: a one:: module, on its own serial queue
  unsafe,                  // ThreadUnsafe: a one:: module on the legacy resource, shared by all such
};
// The study's name of the type.
const char* to_string(thread_type t) noexcept;

struct product_request {
  std::string label;    // the producer's @label
  std::string product;  // its product instance name ("" is the default instance)
};

// A timing module's settings: the keys of its entry that its type takes.
struct module_settings {
  const module_type* type = nullptr;
  thread_type threads = thread_type::safe_between_instances;
  std::vector<product_request> to_get;
  // Time per event, in seconds: event_times[event % size] if present, else average_time (spread
  // deterministically within [min_time, max_time] when both are given, keeping the average).
  std::vector<double> event_times;
  double average_time = 0;
  std::optional<double> min_time, max_time;
  unsigned n_ranges = 1;              // parallel-for filters
  std::string product_label;          // the instance name of its product
  std::optional<std::int64_t> value;  // ThreadSafeProducer: the value it adds
  std::vector<bool> pass;             // filters: decision pass[event % size]; empty: always pass
};

// The settings of an entry of type `t` listed as `context` says, from its parameters (every key of
// each read: a key the type does not take is an error here, not an unread parameter). config_error
// worded as the configuration reader words its own keys: "FILE: process.producers[3] 'alpha':
// eventTimes[7]: negative time -0.5", "... @type: 'PassFilter' is a filter type, not a producer",
// "... key 'pass' does not apply to type FastProducer (it takes: ...)".
module_settings read_settings(const module_type& t, const parameter_set& parameters, const module_context& context);
// The same for entry `entry` of `config`, as make_process would read it (for tools and tests that
// look at a configuration without building it). std::invalid_argument if its type is not one of
// the study's (is_timing_type).
module_settings settings_of(const process_config& config, const module_config& entry);
// Whether `type` names one of the study's types ("BusyWaitProducer", "demo::BusyWaitProducer").
bool is_timing_type(std::string_view type) noexcept;

// How a configuration's timing modules spend their time: the process options they add.
struct timing_options {
  wait_mode wait = wait_mode::as_configured;  // wait
  double time_scale = 1;                      // timeScale: multiplies every time
  double busy_wait_scale = 0;                 // busyWaitScaleFactor: busy-wait iterations per second; 0: unset
};
// The timing that process options `options` (process_config::options) give; defaults where absent.
timing_options timing_of(const parameter_set& options);
// `config` with `timing` in its process options, as heddle-fw's --wait, --time-scale and
// --busy-wait-scale set them (set_option; busyWaitScaleFactor only when busy_wait_scale > 0).
process_config with_timing(process_config config, const timing_options& timing);

// For events 0 .. events-1 of a configuration of the study's timing modules, their times
// multiplied by `time_scale`, their filters deciding by their pass patterns (on the framework's
// generic bound, analysis.hpp; a module of another type costs nothing and passes every event).
// config_error if the configuration does not form a valid process. It builds a process of its own
// (the modules' constructors run on the calling thread) and runs none.
dependency_bound analyse_dependencies(const process_config& config, double time_scale, std::uint64_t events);

}  // namespace heddle::fw::study
