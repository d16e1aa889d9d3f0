// SPDX-License-Identifier: Apache-2.0
// global:: modules: one instance serves every event, called concurrently for as many events as
// the process has in flight. The event methods are const: state that changes per event belongs in
// the event's products, and state shared across events needs its own synchronisation. The
// cheapest kind for the framework (no queue, no copy per stream): prefer it.
#pragma once

#include "heddle/fw/detail/kind_base.hpp"

namespace heddle::fw::global {

// Each role takes the module's abilities as template arguments (abilities.hpp:
// EDProducer<ExternalWork>), built on the kinds' one base (detail/kind_base.hpp); a module overrides
// its role's event method.

// Makes the event's products (event::emplace / put). An exception fails the module for the event
// and stops the job.
template <class... Abilities>
class EDProducer : public fw_detail::kind_base<module_kind::global, module_role::producer, Abilities...> {
 public:
  // The framework calls it on its threads, for several events at once (const: thread-safe).
  virtual void produce(event& e, const event_setup& setup) const = 0;

 private:
  bool call(event& e, const event_setup& setup) final {
    produce(e, setup);
    return true;
  }
};

// Decides the event for the paths it is on (true passes); may also make products.
template <class... Abilities>
class EDFilter : public fw_detail::kind_base<module_kind::global, module_role::filter, Abilities...> {
 public:
  // The framework calls it on its threads, for several events at once (const: thread-safe).
  virtual bool filter(event& e, const event_setup& setup) const = 0;

 private:
  bool call(event& e, const event_setup& setup) final { return filter(e, setup); }
};

// Reads products, makes none (histograms, checks, summaries).
template <class... Abilities>
class EDAnalyzer : public fw_detail::kind_base<module_kind::global, module_role::analyzer, Abilities...> {
 public:
  // The framework calls it on its threads, for several events at once (const: thread-safe).
  virtual void analyze(const event& e, const event_setup& setup) const = 0;

 private:
  bool call(event& e, const event_setup& setup) final {
    analyze(e, setup);
    return true;
  }
};

// Writes the event out; runs on an end path after every path of the event is done, for the events
// its selectEvents paths passed.
template <class... Abilities>
class OutputModule : public fw_detail::kind_base<module_kind::global, module_role::output, Abilities...> {
 public:
  // The framework calls it on its threads, for several events at once (const: thread-safe).
  virtual void write(const event& e) const = 0;

 private:
  bool call(event& e, const event_setup&) final {
    write(e);
    return true;
  }
};

}  // namespace heddle::fw::global
