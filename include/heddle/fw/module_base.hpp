// SPDX-License-Identifier: Apache-2.0
// What every module is to the framework: code that runs once per event, on demand, after the
// products it reads are made, and declares in its constructor what it reads and writes.
//
// A module derives from one of the kinds of global.hpp, stream.hpp or one.hpp (EDProducer,
// EDFilter, EDAnalyzer, OutputModule), with the abilities it lists (abilities.hpp: ExternalWork);
// module_base holds what they share: the declarations (consumes, produces, es_consumes), the
// transitions (job, run, luminosity block) and the module's label. The kinds differ in how much
// concurrency the module's code tolerates:
//   global::  one instance, called concurrently for many events: its event methods are const;
//   stream::  one instance per stream (concurrent event slot): members need no lock;
//   one::     one instance, one event at a time, on the module's serial queue; with
//             uses_resource(name), one at a time with every module that shares the resource.
// The names are CMS's, so that code ports by recognition (docs/fw.md).
//
// Where a module's code runs: the framework calls its event methods and transitions on the
// framework's threads, which are the threaded processor's workers (run_threaded: a runtime of its
// own), or the thread that called run_single_threaded; each kind says which calls may overlap. The
// constructor runs on the thread that makes the module (process::add, make_process, or, for the
// further instances of a stream module, the thread that calls run_threaded, before any event).
#pragma once

#include <cstdint>
#include <string>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/fw/async_handle.hpp"
#include "heddle/fw/detail/declarations.hpp"
#include "heddle/fw/event.hpp"
#include "heddle/fw/event_setup.hpp"
#include "heddle/fw/input_tag.hpp"
#include "heddle/fw/luminosity_block.hpp"
#include "heddle/fw/run.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw {

enum class module_kind : std::uint8_t { global, stream, one };
enum class module_role : std::uint8_t { producer, filter, analyzer, output };
// The names. Thread-safe.
HEDDLE_EXPORT const char* to_string(module_kind k) noexcept;  // "global", "stream", "one"
HEDDLE_EXPORT const char* to_string(module_role r) noexcept;  // "producer", "filter", "analyzer", "output module"

}  // namespace heddle::fw

namespace heddle::fw_detail {
struct module_access;
}  // namespace heddle::fw_detail

namespace heddle::fw {

class HEDDLE_EXPORT module_base {
 public:
  virtual ~module_base();
  module_base(const module_base&) = delete;
  module_base& operator=(const module_base&) = delete;

  // What the module is, fixed by its kind's class. Thread-safe.
  module_kind kind() const noexcept { return kind_; }
  module_role role() const noexcept { return role_; }
  bool external_work() const noexcept { return external_; }  // it lists ExternalWork (abilities.hpp)
  // The module's label in its process ("" until it is added to one). Thread-safe once the module is
  // in a process (process::add_module sets it, on the builder's thread).
  const std::string& label() const noexcept { return label_; }

  // Transitions, in order: begin_job once before the first event, begin_run / end_run around
  // each run's events, inside a run begin_luminosity_block before the first event of each lumi and
  // end_luminosity_block once its last event is done, end_job once after the last. Transitions
  // never run concurrently with one another; for stream modules each runs once per instance
  // (stream). Job and run transitions never overlap event methods. Lumi transitions overlap none
  // either with run_options::concurrent_lumis 1 (the default, and what the processors use whenever
  // the process has a one:: or stream module); with more, a global:: module's lumi transitions may
  // run while its event methods run for events of another lumi (begin of lumi L+1 beside the last
  // events of L, end of L beside the first events of L+1): state kept per lumi must be keyed by
  // lumi and synchronised. The framework calls them on its threads (above: in the threaded
  // processor, one transition at a time, each an item of one serial queue on its workers); a module
  // never calls them itself. end_luminosity_block runs in an order where a module making a
  // luminosity-block product comes before the modules that read it (consumes(tag, in_lumi)),
  // otherwise in the order modules were added. An exception stops the job, naming the module and
  // the transition: no further event starts; in the threaded processor the lumis that began
  // without error and the run still end (docs/fw.md, "Runs and luminosity blocks").
  //
  // end_job runs for every module whose begin_job returned, also when the job stopped on an error
  // (a module's exception in an event or a transition); job_failed() then says so, so that a module
  // can leave unfinished what a complete job would finish (an output file that would lack events).
  virtual void begin_job() {}
  virtual void end_job() {}
  virtual void begin_run(const run& /*r*/, const event_setup& /*setup*/) {}
  // The run is not const here: the module makes its run products in it.
  virtual void end_run(run& /*r*/, const event_setup& /*setup*/) {}
  virtual void begin_luminosity_block(const luminosity_block& /*lumi*/, const event_setup& /*setup*/) {}
  // The lumi is not const here: the module makes its luminosity-block products in it.
  virtual void end_luminosity_block(luminosity_block& /*lumi*/, const event_setup& /*setup*/) {}

  // Whether the job stopped on an error: false until end_job, then true if it did. Inline, a load.
  // From the module's own calls (end_job's answer is final): the processors set it while none of
  // them runs, before end_job.
  bool job_failed() const noexcept { return job_failed_; }

  // About how long one event's call takes, waits included, in seconds; 0 if unknown. A hint: the
  // threaded processor runs first what lies on the longest remaining chain of work, and learns
  // real durations as the run goes. It asks the module's first instance, once per run, on the
  // thread that called run_threaded, before any event starts.
  virtual double expected_seconds() const noexcept { return 0; }

 protected:
  module_base(module_kind kind, module_role role, bool external) noexcept
      : kind_(kind), role_(role), external_(external) {}

  // Declarations, in the constructor only (std::logic_error once the module is in a process): the
  // constructing thread's calls, not thread-safe.
  // Reads product `tag` of type T, from the event, or with `where` in_lumi the luminosity-block
  // product of that tag (read in end_luminosity_block), with in_run the run product (read in
  // end_run). finalize() checks that some module makes it, in the event, at end_luminosity_block
  // or at end_run as `where` says, and fails naming both modules and the type otherwise.
  template <class T>
  get_token<T> consumes(input_tag tag, branch_type where = in_event) {
    return get_token<T>(declare_consumes(std::move(tag), typeid(T), where));
  }
  // Writes a product of type T, instance `instance` ("" is the default), in each event, or with
  // `when` transition::end_luminosity_block once per lumi in end_luminosity_block (CMS's
  // produces<T, edm::Transition::EndLuminosityBlock>(instance)), or transition::end_run once per
  // run in end_run. std::logic_error if the module already declared a T of that instance, or for a
  // luminosity-block or run product of a stream module (each of its instances would make it:
  // CMS's stream modules cannot either).
  template <class T>
  put_token<T> produces(std::string instance = {}, transition when = transition::event) {
    return put_token<T>(declare_produces(std::move(instance), &fw_detail::ops_of<T>, when));
  }
  // Reads conditions data T of record R (the data labelled `label` where a record holds several).
  template <class T, class R>
  es_token<T, R> es_consumes(std::string label = {}) {
    return es_token<T, R>(declare_es_consumes(typeid(T), typeid(R), std::move(label)));
  }
  // one:: kinds: the module shares resource `name` (see one.hpp).
  void declare_resource(std::string name);

 private:
  friend struct fw_detail::module_access;
  // The event's call: the role's method (produce, filter, analyze, write); a filter's decision,
  // true for the others.
  virtual bool call(event& e, const event_setup& setup) = 0;
  virtual void call_acquire(const event& e, const event_setup& setup, async_handle handle) = 0;

  std::uint32_t declare_consumes(input_tag tag, const std::type_info& type, branch_type where);
  std::uint32_t declare_produces(std::string instance, const fw_detail::product_ops* ops, transition when);
  std::uint32_t declare_es_consumes(const std::type_info& type, const std::type_info& record, std::string label);
  void check_open(const char* what) const;

  module_kind kind_;
  module_role role_;
  bool external_;
  bool job_failed_ = false;  // set by the processors before end_job
  std::string label_;
  fw_detail::declarations declared_;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::module_kind;
using fw::module_role;
}  // namespace heddle::fw_detail
