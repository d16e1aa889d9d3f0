// SPDX-License-Identifier: Apache-2.0
// A process: modules, the paths of filters that decide each event, and the end paths of output
// modules that run once every path of the event is done. Built from a configuration
// (make_process) or by hand with user modules; checked as a whole by finalize().
//
// Thread safety: a process is built on one thread (add_*, set_conditions, finalize: not
// thread-safe, the builder's calls), then run by one processor at a time (processor.hpp), on any
// thread; its const calls are thread-safe while no builder call runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/abilities.hpp"
#include "heddle/fw/conditions.hpp"
#include "heddle/fw/config.hpp"
#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/module_base.hpp"

namespace heddle::fw {

class process;

}  // namespace heddle::fw

namespace heddle::fw_detail {
class graph;
// The finalized process as the processors and the dependency bound see it (src/fw/graph.hpp, not
// installed). std::logic_error before finalize().
HEDDLE_EXPORT const graph& graph_of(const fw::process& p);
}  // namespace heddle::fw_detail

namespace heddle::fw {

// How a module appears in its process.
// The members have default initializers so that {"label"} (process::add's usual spelling) leaves
// the others empty without -Wmissing-field-initializers.
struct module_spec {
  std::string label = {};  // unique; the label of the module's products
  std::string type = {};   // its type's name, for messages and reports
  std::string where = {};  // where it was declared ("reco.json: process.producers[3]"), for messages
  std::vector<std::string> select_paths = {};  // output modules: write only events that passed one of these
};

// Makes one instance of a module. Called once when the module is added (on the builder's
// thread), and for stream modules once more per further stream when a run needs them (on the
// thread that calls run_threaded, before any event); each instance must declare the same
// consumes and produces.
using module_factory = std::function<std::unique_ptr<module_base>()>;

class HEDDLE_EXPORT process {
 public:
  // `source` names the process in messages (a configuration file, say). Thread-safe.
  explicit process(std::string source = "process");
  // Destroys the modules; not while a processor runs the process, and before the plugin loader
  // that made them (plugins.hpp). Not thread-safe, as the moves.
  ~process();
  process(process&&) noexcept;
  process& operator=(process&&) noexcept;

  // Adds a module made by `make` (called once here). Returns the instance, owned by the process.
  // std::invalid_argument if `make` gives nothing; std::logic_error after finalize(). Not
  // thread-safe: the builder's call.
  module_base& add_module(module_spec spec, module_factory make);
  // add_module of an M made from copies of `args`: p.add<JetProducer>({"jets"}, params). Does not
  // compile for a module type that fails fw_detail::check_module_type (an ExternalWork module without
  // acquire: abilities.hpp). Not thread-safe: the builder's call.
  template <class M, class... A>
  M& add(module_spec spec, A... args) {
    static_assert(std::is_base_of_v<module_base, M>, "a module derives from a kind (global.hpp, stream.hpp, one.hpp)");
    fw_detail::check_module_type<M>();
    return static_cast<M&>(add_module(std::move(spec), [args...] { return std::make_unique<M>(args...); }));
  }
  // Adds a condition producer (es_producer.hpp); spec.label names it in messages.
  // std::invalid_argument for a null one; std::logic_error after finalize(). Not thread-safe: the
  // builder's call, as add_es.
  es_producer& add_es_producer(module_spec spec, std::unique_ptr<es_producer> producer);
  template <class P, class... A>
  P& add_es(module_spec spec, A&&... args) {
    return static_cast<P&>(add_es_producer(std::move(spec), std::make_unique<P>(std::forward<A>(args)...)));
  }
  // The intervals of validity and payloads of records (conditions.hpp); replaces what was set.
  // std::logic_error after finalize(). Not thread-safe: the builder's call.
  void set_conditions(conditions c);

  // A path of filters, an end path of output modules, by label (resolved by finalize()).
  // std::logic_error after finalize(). Not thread-safe: the builder's calls.
  void add_path(std::string name, std::vector<std::string> filters);
  void add_end_path(std::string name, std::vector<std::string> outputs);

  // Resolves labels and checks the whole: unique labels; every consumed (tag, type) made by
  // exactly one module, in the event or at end_luminosity_block as the consumes says (a mismatch
  // names both modules and the types); every es_consumes made by exactly one condition producer
  // (naming the module, type and record); paths of filters, end paths of output modules; no
  // dependency cycle (the cycle is printed), none through luminosity-block products either; and
  // orders the end_luminosity_block transitions (makers of lumi products first). config_error
  // otherwise.
  // Idempotent; the processors call it. Not thread-safe: the builder's call, or the processor's
  // (one processor at a time runs a process).
  void finalize();

  // Thread-safe, as the calls below, while no builder call runs (a run changes none of them).
  const std::string& source() const noexcept { return source_; }
  // Modules added so far, and paths (not end paths).
  std::size_t num_modules() const noexcept;
  std::size_t num_paths() const noexcept;
  // The i-th module added (timeline entries name modules by this index) and its (first)
  // instance; std::out_of_range for i >= num_modules(). module(i) also not while a run starts
  // (run_threaded makes stream modules' further instances then).
  const module_spec& spec(std::size_t i) const;
  const module_base& module(std::size_t i) const;

 private:
  friend const fw_detail::graph& fw_detail::graph_of(const process& p);

  std::string source_;
  std::unique_ptr<fw_detail::graph> graph_;
  // Path members by label, resolved by finalize().
  std::vector<std::vector<std::string>> pending_labels_, pending_end_labels_;
};

class plugin_loader;

// A process from a configuration: its modules of registered types (registry.hpp), found in the
// program (the study's timing modules where the program links them: heddle-fw does) or, when
// `plugins` is given, in plugin libraries (plugins.hpp; the loader must outlive the process), each
// made from its parameters and told the process options that types add (process_config::options). config_error naming
// the module on an unknown type, a type of another role than its list (producers, filters, analyzers, outputs), a
// parameter the module did not read, a parameter_error, or a constructor that threw. Thread-safe, but for `plugins` (a
// loader is one thread's); the modules' constructors run on the calling thread.
HEDDLE_EXPORT process make_process(const process_config& config, plugin_loader* plugins = nullptr);

}  // namespace heddle::fw
