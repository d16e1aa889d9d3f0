// SPDX-License-Identifier: Apache-2.0
// stream:: modules: one instance per stream (concurrent event slot), each called for one event at
// a time, so members need no lock. The framework makes the instances (one per events in flight,
// as streams come into use) through the factory the module was added with; each declares the
// same consumes and produces in its constructor. Costs a module instance per stream.
#pragma once

#include "heddle/fw/detail/kind_base.hpp"

namespace heddle::fw::stream {

// Each role takes the module's abilities as template arguments (abilities.hpp:
// EDProducer<ExternalWork>), built on the kinds' one base (detail/kind_base.hpp); a module overrides
// its role's event method.

// Makes the event's products (event::emplace / put). An exception fails the module for the event
// and stops the job.
template <class... Abilities>
class EDProducer : public fw_detail::kind_base<module_kind::stream, module_role::producer, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time per instance.
  virtual void produce(event& e, const event_setup& setup) = 0;

 private:
  bool call(event& e, const event_setup& setup) final {
    produce(e, setup);
    return true;
  }
};

// Decides the event for the paths it is on (true passes); may also make products.
template <class... Abilities>
class EDFilter : public fw_detail::kind_base<module_kind::stream, module_role::filter, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time per instance.
  virtual bool filter(event& e, const event_setup& setup) = 0;

 private:
  bool call(event& e, const event_setup& setup) final { return filter(e, setup); }
};

// Reads products, makes none (histograms, checks, summaries).
template <class... Abilities>
class EDAnalyzer : public fw_detail::kind_base<module_kind::stream, module_role::analyzer, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time per instance.
  virtual void analyze(const event& e, const event_setup& setup) = 0;

 private:
  bool call(event& e, const event_setup& setup) final {
    analyze(e, setup);
    return true;
  }
};

// Writes the event out; runs on an end path after every path of the event is done, for the events
// its selectEvents paths passed.
template <class... Abilities>
class OutputModule : public fw_detail::kind_base<module_kind::stream, module_role::output, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time per instance.
  virtual void write(const event& e) = 0;

 private:
  bool call(event& e, const event_setup&) final {
    write(e);
    return true;
  }
};

}  // namespace heddle::fw::stream
