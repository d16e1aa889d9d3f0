// SPDX-License-Identifier: Apache-2.0
// async_handle: completing an ExternalWork module's acquire.
#include "heddle/fw/async_handle.hpp"

#include <stdexcept>
#include <string>
#include <thread>

#include "heddle/async/detail/deadline.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/completion_hook.hpp"
#include "heddle/core/detail/detached_task.hpp"

namespace heddle::fw {

async_handle::~async_handle() {
  if (sink_) sink_->dropped(event_, module_);
}

fw_detail::acquire_sink* async_handle::take() {
  if (!sink_) throw std::logic_error("heddle::fw::async_handle: already completed (or moved from)");
  return std::exchange(sink_, nullptr);
}

void async_handle::done() { take()->acquired(event_, module_, nullptr); }

void async_handle::fail(std::exception_ptr error) {
  if (!error) throw std::invalid_argument("heddle::fw::async_handle::fail: null exception_ptr");
  take()->acquired(event_, module_, std::move(error));
}

namespace {
// Hands a completed future's outcome to the sink, on the completing thread.
struct acquire_hook final : heddle::core_detail::completion_hook {
  acquire_hook(fw_detail::acquire_sink* s, void* e, std::uint32_t m) noexcept
      : completion_hook(&finished), sink(s), event(e), module(m) {}
  static void finished(completion_hook* h, std::exception_ptr error) noexcept {
    auto* self = static_cast<acquire_hook*>(h);
    self->sink->acquired(self->event, self->module, std::move(error));
    delete self;
  }
  fw_detail::acquire_sink* sink;
  void* event;
  std::uint32_t module;
};
}  // namespace

void async_handle::after(future<void>&& f) {
  if (!f.valid()) throw invalid_future("heddle::fw::async_handle::after: the future has no state");
  fw_detail::acquire_sink* s = take();
  if (!s->core()) {  // a processor without a runtime (the single-threaded one): wait here
    std::exception_ptr error;
    try {
      f.get();
    } catch (...) {
      error = std::current_exception();
    }
    return s->acquired(event_, module_, std::move(error));
  }
  auto* hook = new acquire_hook(s, event_, module_);
  hook->hook(heddle::core_detail::access::state_of(std::move(f)));
}

void async_handle::done_at(std::chrono::steady_clock::time_point deadline) {
  fw_detail::acquire_sink* s = take();
  heddle::core_detail::runtime_core* core = s->core();
  if (!core) {
    std::this_thread::sleep_until(deadline);
    return s->acquired(event_, module_, nullptr);
  }
  auto fire = [s, e = event_, m = module_] { s->deadline_passed(e, m); };
  heddle::async_detail::schedule_at(
      core, deadline, heddle::core_detail::make_record<heddle::core_detail::detached_task<decltype(fire)>>(fire));
}

}  // namespace heddle::fw
