// one:: modules: one instance, one event at a time, on the module's serial queue. With
// uses_resource(name) the module instead runs one at a time with every module that declared the
// same resource (one serial queue per resource; a module with several holds them all, taken in
// name order so that no two modules wait on each other), and freely beside modules that do not
// share it: how a framework lives with a thread-unsafe library. uses_resource() without a name is
// the legacy resource shared by every thread-unsafe module.
#pragma once

#include "heddle/fw/module_base.hpp"

namespace heddle::fw::one {

// Makes the event's products (event::emplace / put). An exception fails the module for the event
// and stops the job.
template <class... Abilities>
class EDProducer : public module_base {
 public:
  EDProducer() noexcept : module_base(module_kind::one, module_role::producer, detail::external_work<Abilities...>) {}

  virtual void produce(event& e, const event_setup& setup) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

 protected:
  // Runs one at a time with every module that declares `name` (in the constructor only).
  void uses_resource(std::string name) { declare_resource(std::move(name)); }
  // The legacy resource: one at a time with every thread-unsafe module.
  void uses_resource() { declare_resource(detail::legacy_resource); }

 private:
  bool call(event& e, const event_setup& setup) final {
    produce(e, setup);
    return true;
  }
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

// Decides the event for the paths it is on (true passes); may also make products.
template <class... Abilities>
class EDFilter : public module_base {
 public:
  EDFilter() noexcept : module_base(module_kind::one, module_role::filter, detail::external_work<Abilities...>) {}

  virtual bool filter(event& e, const event_setup& setup) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

 protected:
  // Runs one at a time with every module that declares `name` (in the constructor only).
  void uses_resource(std::string name) { declare_resource(std::move(name)); }
  // The legacy resource: one at a time with every thread-unsafe module.
  void uses_resource() { declare_resource(detail::legacy_resource); }

 private:
  bool call(event& e, const event_setup& setup) final {
    return filter(e, setup);
  }
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

// Reads products, makes none (histograms, checks, summaries).
template <class... Abilities>
class EDAnalyzer : public module_base {
 public:
  EDAnalyzer() noexcept : module_base(module_kind::one, module_role::analyzer, detail::external_work<Abilities...>) {}

  virtual void analyze(const event& e, const event_setup& setup) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

 protected:
  // Runs one at a time with every module that declares `name` (in the constructor only).
  void uses_resource(std::string name) { declare_resource(std::move(name)); }
  // The legacy resource: one at a time with every thread-unsafe module.
  void uses_resource() { declare_resource(detail::legacy_resource); }

 private:
  bool call(event& e, const event_setup& setup) final {
    analyze(e, setup);
    return true;
  }
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

// Writes the event out; runs on an end path after every path of the event is done, for the events
// its selectEvents paths passed.
template <class... Abilities>
class OutputModule : public module_base {
 public:
  OutputModule() noexcept : module_base(module_kind::one, module_role::output, detail::external_work<Abilities...>) {}

  virtual void write(const event& e) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

 protected:
  // Runs one at a time with every module that declares `name` (in the constructor only).
  void uses_resource(std::string name) { declare_resource(std::move(name)); }
  // The legacy resource: one at a time with every thread-unsafe module.
  void uses_resource() { declare_resource(detail::legacy_resource); }

 private:
  bool call(event& e, const event_setup&) final {
    write(e);
    return true;
  }
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

}  // namespace heddle::fw::one
