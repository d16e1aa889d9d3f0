// SPDX-License-Identifier: Apache-2.0
#include "heddle/core/runtime.hpp"

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "heddle/algorithm/parallel_for.hpp"  // current_concurrency()
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/detached_task.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/isolate.hpp"
#include "heddle/core/per_worker.hpp"
#include "runtime_core.hpp"

namespace heddle {

namespace {

unsigned parse_thread_count(const char* text) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < 1 || v > 4096)
    throw configuration_error(std::string("heddle: HEDDLE_NUM_THREADS='") + text +
                              "' is not a whole number of threads from 1 to 4096");
  return static_cast<unsigned>(v);
}

}  // namespace

unsigned default_thread_count() {
  if (const char* env = std::getenv("HEDDLE_NUM_THREADS"); env && *env) return parse_thread_count(env);
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

runtime::runtime(const runtime_options& options) {
  runtime_options o = options;
  if (o.threads == 0) o.threads = default_thread_count();
  if (o.threads > 4096) throw configuration_error("heddle::runtime: more than 4096 threads requested");
  if (o.stack_bytes < (std::size_t{64} << 10)) throw configuration_error("heddle::runtime: stack_bytes below 64 KiB");
  core_.reset(new core_detail::runtime_core(o, this));
}

runtime::~runtime() = default;

void runtime::core_deleter::operator()(core_detail::runtime_core* c) const noexcept { delete c; }

unsigned runtime::num_threads() const noexcept { return core_->size(); }

runtime_stats runtime::stats() const { return core_->stats(); }

runtime_stats stats() { return core_detail::current_core()->stats(); }

runtime& default_runtime() {
  static runtime rt;
  return rt;
}

runtime& current_runtime() { return core_detail::current_core()->owner(); }

namespace core_detail {

std::uint32_t new_isolation() noexcept {
  // Wraps after 2^32 - 1 regions; 0 means none. A task of a region that old sharing an id with a
  // new one only lets the new region's waiters run it.
  static std::atomic<std::uint32_t> next{0};
  std::uint32_t id;
  do id = next.fetch_add(1, std::memory_order_relaxed) + 1;
  while (id == 0);
  return id;
}

std::uint64_t new_per_worker_id() noexcept {
  static std::atomic<std::uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed) + 1;
}

runtime_core* default_core() { return access::core_of(default_runtime()); }

void inject(runtime_core* core, task_base* t) { core->inject(t); }
void submit_express(runtime_core* core, task_base* t) { core->submit_express(t); }

bool work_waiting(runtime_core* core) noexcept {
  worker* w = current_worker;
  return !w || w->core != core || core->stopping() || core->work_visible(w);
}

void wake_one_sleeper(runtime_core* core) noexcept { core->lot().wake_one(); }

unsigned new_service_id() {
  static std::atomic<unsigned> next{0};
  const unsigned id = next.fetch_add(1, std::memory_order_relaxed);
  if (id >= runtime_core::max_services) throw std::logic_error("heddle: more kinds of runtime service than slots");
  return id;
}

runtime_service& service(runtime_core* core, unsigned id, service_factory make) { return core->service(id, make); }

bool core_stopping(const runtime_core* core) noexcept { return core->stopping(); }

void record_timer_lateness(runtime_core* core, std::int64_t deadline_ns, std::int64_t completed_ns) noexcept {
  core->timer_lateness().record(static_cast<std::uint64_t>(completed_ns > deadline_ns ? completed_ns - deadline_ns
                                                                                      : 0));
}

void report_detached_error(std::exception_ptr e) noexcept {
  fatal_unrecoverable("a detached task threw: " + exception_text(e), "heddle::runtime");
}

unsigned current_concurrency() { return current_core()->size(); }

std::exception_ptr shutdown_error() {
  return std::make_exception_ptr(task_cancelled("heddle: the runtime stopped before this task started"));
}

}  // namespace core_detail
}  // namespace heddle
