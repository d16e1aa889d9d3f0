// SPDX-License-Identifier: Apache-2.0
// one:: modules: one instance, one event at a time, on the module's serial queue. With
// uses_resource(name) the module instead runs one at a time with every module that declared the
// same resource (one serial queue per resource; a module with several holds them all, taken in
// name order so that no two modules wait on each other), and freely beside modules that do not
// share it: how a framework lives with a thread-unsafe library. uses_resource() without a name is
// the legacy resource shared by every thread-unsafe module.
#pragma once

#include "heddle/fw/detail/kind_base.hpp"

namespace heddle::fw::one {

// Each role takes the module's abilities as template arguments (abilities.hpp:
// EDProducer<ExternalWork>), built on the kinds' one base (detail/kind_base.hpp); a module overrides
// its role's event method.

// Makes the event's products (event::emplace / put). An exception fails the module for the event
// and stops the job.
template <class... Abilities>
class EDProducer : public fw_detail::kind_base<module_kind::one, module_role::producer, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time (holding the module's serial queue,
  // or its resources').
  virtual void produce(event& e, const event_setup& setup) = 0;

 private:
  bool call(event& e, const event_setup& setup) final {
    produce(e, setup);
    return true;
  }
};

// Decides the event for the paths it is on (true passes); may also make products.
template <class... Abilities>
class EDFilter : public fw_detail::kind_base<module_kind::one, module_role::filter, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time (holding the module's serial queue,
  // or its resources').
  virtual bool filter(event& e, const event_setup& setup) = 0;

 private:
  bool call(event& e, const event_setup& setup) final { return filter(e, setup); }
};

// Reads products, makes none (histograms, checks, summaries).
template <class... Abilities>
class EDAnalyzer : public fw_detail::kind_base<module_kind::one, module_role::analyzer, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time (holding the module's serial queue,
  // or its resources').
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
class OutputModule : public fw_detail::kind_base<module_kind::one, module_role::output, Abilities...> {
 public:
  // The framework calls it on its threads, one event at a time (holding the module's serial queue,
  // or its resources').
  virtual void write(const event& e) = 0;

 private:
  bool call(event& e, const event_setup&) final {
    write(e);
    return true;
  }
};

}  // namespace heddle::fw::one
