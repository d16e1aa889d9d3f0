// SPDX-License-Identifier: Apache-2.0
// async_handle: how an ExternalWork module's acquire() says that the asynchronous work it started
// is over. acquire(event, setup, handle) starts the work (a timer, I/O, a remote call, a device)
// and returns at once; the module's produce/filter/analyze runs once the handle is completed and
// acquire() has returned (never beside it, even if the handle is completed inside it), as a new
// task. No thread is held in between: this is how a module waits for something outside the CPU
// without taking a worker from the other events.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>

#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"

namespace heddle::fw {

class async_handle;

}  // namespace heddle::fw

namespace heddle::fw_detail {
// The framework's side of an acquire: where a completed handle goes. The processors are sinks; a
// module only ever sees the handle.
class HEDDLE_EXPORT acquire_sink {
 public:
  // A handle for module `module` of `event`, completed here.
  fw::async_handle handle(void* event, std::uint32_t module) noexcept;

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
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Completes the asynchronous part of one acquire, exactly once, from any thread. Move-only; a
// handle destroyed without being completed fails the module ("acquire dropped its handle"), so a
// forgotten handle ends the run with an error instead of hanging it.
// Thread safety: one handle object is one owner's at a time (its calls are not thread-safe against
// each other): move it to the thread or continuation that completes it. Completing it may happen
// anywhere, inside acquire included; the module's produce then runs later as a task of the
// framework, never on the completing thread's stack. In the single-threaded processor, which has
// no runtime, after() and done_at() block the calling thread until the future is ready or the
// deadline has passed.
class HEDDLE_EXPORT async_handle {
 public:
  async_handle(async_handle&& o) noexcept
      : sink_(std::exchange(o.sink_, nullptr)), event_(o.event_), module_(o.module_) {}
  async_handle& operator=(async_handle&&) = delete;
  async_handle(const async_handle&) = delete;
  // Fails the module if the handle was not completed (nor moved from). The owner's call, any thread.
  ~async_handle();

  // The work is done: produce() may run. The owner's call, any thread; never waits.
  // std::logic_error if the handle was completed already or moved from (as for each call below).
  void done();
  // The work failed: the module fails with `error` (std::invalid_argument for a null one). The
  // owner's call, any thread; never waits.
  void fail(std::exception_ptr error);
  // Done when `f` completes; failed if `f` fails. Nothing waits in between (invalid_future for a
  // future without a state). The owner's call, any thread; never waits (but in the single-threaded
  // processor, above).
  void after(future<void>&& f);
  // Done at `deadline`, through the runtime's timer engine; nothing waits in between. The owner's
  // call, any thread; never waits (but in the single-threaded processor, above).
  void done_at(std::chrono::steady_clock::time_point deadline);

  // False once completed or moved from. The owner's call.
  bool valid() const noexcept { return sink_ != nullptr; }

 private:
  friend class fw_detail::acquire_sink;  // the processors make handles
  async_handle(fw_detail::acquire_sink* sink, void* event, std::uint32_t module) noexcept
      : sink_(sink), event_(event), module_(module) {}
  fw_detail::acquire_sink* take();
  fw_detail::acquire_sink* sink_;
  void* event_;
  std::uint32_t module_;
};

}  // namespace heddle::fw

namespace heddle::fw_detail {
// The fw layer's internals name it unqualified.
using fw::async_handle;

inline async_handle acquire_sink::handle(void* event, std::uint32_t module) noexcept {
  return async_handle(this, event, module);
}
}  // namespace heddle::fw_detail
