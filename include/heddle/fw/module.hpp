// What a module is to the framework: code that runs once per event, on demand, after the products
// it gets (its inputs) are there. A producer's result is its product, a filter's decides its paths
// (non-zero passes), an output module's is what it wrote. Results are integers: the framework
// models the scheduling of real reconstruction jobs, and integer products make every event's
// results, and so a whole run's checksum, exact and independent of the order modules ran in.
//
// ExternalWork: a module whose external_work() is true first gets acquire(event, handle), which
// starts asynchronous work (a timer, I/O, a remote call) and returns at once; produce() runs once
// the handle is completed. No thread is held in between.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <span>

#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"

namespace heddle::fw {

// How much concurrency a module's code tolerates.
enum class thread_type : std::uint8_t {
  safe_between_instances,  // any number of events at once
  safe_between_modules,    // one event at a time (the module's own serial queue)
  unsafe,                  // one global serial queue shared by every such module: no two ever overlap
};

enum class module_role : std::uint8_t { producer, filter, output };

HEDDLE_EXPORT const char* to_string(thread_type t) noexcept;
HEDDLE_EXPORT const char* to_string(module_role r) noexcept;

// One event as a module sees it while it runs: the event's number, its run, and the products of
// the modules it declared as inputs, in declaration order.
class HEDDLE_EXPORT event_view {
 public:
  event_view(std::uint64_t number, std::uint32_t run, const std::int64_t* products, std::span<const std::uint32_t> inputs) noexcept
      : products_(products), inputs_(inputs), number_(number), run_(run) {}

  std::uint64_t number() const noexcept { return number_; }
  std::uint32_t run() const noexcept { return run_; }
  std::size_t num_inputs() const noexcept { return inputs_.size(); }
  // The product of the i-th declared input (i < num_inputs(), checked: std::out_of_range).
  std::int64_t input(std::size_t i) const;
  // The sum of every input, wrapping (products are arithmetic modulo 2^64).
  std::int64_t input_sum() const noexcept;

 private:
  const std::int64_t* products_;
  std::span<const std::uint32_t> inputs_;
  std::uint64_t number_;
  std::uint32_t run_;
};

class async_handle;

namespace detail {
// The framework's side of an acquire: where a completed handle goes. The processors are sinks; a
// module only ever sees the handle.
class HEDDLE_EXPORT acquire_sink {
 public:
  // A handle for module `module` of `event`, completed here.
  async_handle handle(void* event, std::uint32_t module) noexcept;

  virtual void acquired(void* event, std::uint32_t module, std::exception_ptr error) noexcept = 0;
  // The handle was destroyed uncompleted (inside acquire, perhaps while an exception unwinds it).
  virtual void dropped(void* event, std::uint32_t module) noexcept = 0;
  // done_at's deadline has passed; called from the task the timer engine scheduled, so a sink may
  // go on right there.
  virtual void deadline_passed(void* event, std::uint32_t module) noexcept { acquired(event, module, nullptr); }
  virtual heddle::core_detail::runtime_core* core() const noexcept = 0;

 protected:
  ~acquire_sink() = default;
};
}  // namespace detail

// Completes the asynchronous part of one acquire, exactly once, from any thread. Move-only; a
// handle destroyed without being completed fails the module ("acquire dropped its handle"), so a
// forgotten handle ends the run with an error instead of hanging it.
class HEDDLE_EXPORT async_handle {
 public:
  async_handle(async_handle&& o) noexcept : sink_(std::exchange(o.sink_, nullptr)), event_(o.event_), module_(o.module_) {}
  async_handle& operator=(async_handle&&) = delete;
  async_handle(const async_handle&) = delete;
  ~async_handle();

  // The work is done: produce() may run.
  void done();
  // The work failed: the module fails with `error`.
  void fail(std::exception_ptr error);
  // Done when `f` completes; failed if `f` fails. Nothing waits in between.
  void after(future<void>&& f);
  // Done at `deadline`, through the runtime's timer engine; nothing waits in between.
  void done_at(std::chrono::steady_clock::time_point deadline);

  bool valid() const noexcept { return sink_ != nullptr; }

 private:
  friend class detail::acquire_sink;  // the processors make handles
  async_handle(detail::acquire_sink* sink, void* event, std::uint32_t module) noexcept
      : sink_(sink), event_(event), module_(module) {}
  detail::acquire_sink* take();
  detail::acquire_sink* sink_;
  void* event_;
  std::uint32_t module_;
};

inline async_handle detail::acquire_sink::handle(void* event, std::uint32_t module) noexcept {
  return async_handle(this, event, module);
}

class HEDDLE_EXPORT module {
 public:
  virtual ~module() = default;

  // Once per run, before its first event starts / after its last event is done, never
  // concurrently with produce() or acquire() of any module.
  virtual void begin_run(std::uint32_t /*run*/) {}
  virtual void end_run(std::uint32_t /*run*/) {}

  // ExternalWork (see the top of this file).
  virtual bool external_work() const noexcept { return false; }
  virtual void acquire(const event_view& /*event*/, async_handle handle) { handle.done(); }

  // The module's result for the event (see the top of this file). An exception stops the run.
  virtual std::int64_t produce(const event_view& event) = 0;

  // About how long one execution takes, waits included, in seconds; 0 if unknown. A hint: the
  // threaded processor runs first what lies on the longest remaining chain of work, and learns
  // real durations as the run goes.
  virtual double expected_seconds() const noexcept { return 0; }
};

}  // namespace heddle::fw
