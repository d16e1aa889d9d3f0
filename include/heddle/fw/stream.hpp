// stream:: modules: one instance per stream (concurrent event slot), each called for one event at
// a time, so members need no lock. The framework makes the instances (one per events in flight,
// as streams come into use) through the factory the module was added with; each declares the
// same consumes and produces in its constructor. Costs a module instance per stream.
#pragma once

#include "heddle/fw/module_base.hpp"

namespace heddle::fw::stream {

// Makes the event's products (event::emplace / put). An exception fails the module for the event
// and stops the job.
template <class... Abilities>
class EDProducer : public module_base {
 public:
  EDProducer() noexcept : module_base(module_kind::stream, module_role::producer, detail::external_work<Abilities...>) {}

  virtual void produce(event& e, const event_setup& setup) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

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
  EDFilter() noexcept : module_base(module_kind::stream, module_role::filter, detail::external_work<Abilities...>) {}

  virtual bool filter(event& e, const event_setup& setup) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

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
  EDAnalyzer() noexcept : module_base(module_kind::stream, module_role::analyzer, detail::external_work<Abilities...>) {}

  virtual void analyze(const event& e, const event_setup& setup) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

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
  OutputModule() noexcept : module_base(module_kind::stream, module_role::output, detail::external_work<Abilities...>) {}

  virtual void write(const event& e) = 0;

  // ExternalWork only (see module_base.hpp): starts the asynchronous work and completes `handle`
  // when it is over (async_handle.hpp), or returns a future of it (the other overload). By
  // default this one completes the handle when the other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    detail::acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { detail::no_acquire(*this); }

 private:
  bool call(event& e, const event_setup&) final {
    write(e);
    return true;
  }
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

}  // namespace heddle::fw::stream
