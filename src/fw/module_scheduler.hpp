// SPDX-License-Identifier: Apache-2.0
// The threaded processor's workers, as CMSSW's workers and their waiting tasks: which module of
// which event runs next. A module runs once per event, when something asks for it: a path reaching a
// filter, a module that gets its product, an end path. Asking (request) marks it, asks its producers
// in turn, prefetches the conditions it reads and waits on its in-edges; the last producer to
// finish, or the request itself when all were done, starts it: a reentrant module as the next module
// of the worker whose module made it ready (run_chain), or through the ready list (ready_queue.hpp,
// longest chain of work first), which the workers' drains empty, one task per drain, not per module;
// a one:: module through its serial queues (its own, or its shared resources' in name order). A
// finished module sets the done bit of each out-edge and delivers where the consumer was already
// waiting. No locks on this path but the ready lists'. An ExternalWork module's produce waits,
// without a thread, for its handle and for its acquire to return.
//
// The event's record (event_state) comes from the processor, which start_event() hands it to and
// which event_done() hands it back to once every module that was asked for is over.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "es_state.hpp"
#include "event_state.hpp"
#include "graph.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/dispatch/concurrent_queue.hpp"
#include "heddle/dispatch/serial_queue.hpp"
#include "heddle/fw/async_handle.hpp"
#include "heddle/fw/processor.hpp"
#include "path_rule.hpp"
#include "ready_queue.hpp"
#include "stop_control.hpp"

namespace heddle::fw_detail {

// Where an event goes once its modules are over (the processor's source).
class event_sink {
 public:
  // Every module of `e` that was asked for is over (run, failed, or drained after a stop): its
  // record is the sink's again. Called once per event started, from any worker.
  virtual void event_done(event_state* e) = 0;

 protected:
  ~event_sink() = default;
};

// Thread-safe as the threaded processor uses it: start_event() from any thread, for records that
// are not in flight; the acquire_sink calls from wherever a handle is completed. Constructed and
// destroyed on one thread, with no event in flight.
class module_scheduler final : public acquire_sink {
 public:
  // `rt`: the runtime whose workers run the modules; `traced`: record module spans (the run began
  // while tracing); `stop`: where failures go, and whether modules still run; `done`: where events go
  // once over. All outlive the scheduler.
  module_scheduler(const graph& g, const run_options& o, runtime& rt, bool traced, stop_control& stop,
                   event_sink& done);
  // Waits for the drains still finishing (a few instructions past the last event's end).
  ~module_scheduler();

  // Runs event `e` (reset for its id): its paths, then its end paths; done.event_done(e) once over.
  void start_event(event_state* e);

  // The conditions events and transitions read (made once per interval, prefetched for events).
  es_state& conditions() noexcept { return es_; }

  // --- acquire_sink: an ExternalWork module's asynchronous part is over.
  void acquired(void* event, std::uint32_t m, std::exception_ptr error) noexcept override;
  void deadline_passed(void* event, std::uint32_t m) noexcept override;
  void dropped(void* event, std::uint32_t m) noexcept override;
  heddle::core_detail::runtime_core* core() const noexcept override;

 private:
  // One path of one event, as path_rule.hpp steps it: a filter has decided once its step's edge
  // is done; one that has not goes on with the path when it completes (complete()).
  struct path_walker {
    module_scheduler& s;
    event_state* e;
    const std::uint32_t* step_edge;  // the path's steps' edges
    void ask(std::uint32_t f) { s.request(e, f); }
    bool decided(std::uint32_t, std::uint32_t k) noexcept { return wait_edge(e, step_edge[k]); }
    bool passes(std::uint32_t f) const noexcept {
      return s.g_.nodes[f].role() != module_role::filter || e->passes_event(f);
    }
  };
  path_walker walker(event_state* e, std::uint32_t p) noexcept {
    return {*this, e, g_.step_edge.data() + g_.paths[p].first_step};
  }

  // --- an event's paths and end paths
  void path_stepped(event_state* e, std::uint32_t p, path_state s);
  void path_finished(event_state* e);
  void output_finished(event_state* e);
  void release(event_state* e);
  static bool wait_edge(event_state* e, std::uint32_t edge) noexcept;

  // --- asking for a module, and its readiness (producers, conditions)
  void request(event_state* e, std::uint32_t m);
  [[gnu::noinline]] void request_first(event_state* e, std::uint32_t m);
  [[gnu::noinline]] std::uint32_t await_conditions(event_state* e, std::uint32_t m);
  void conditions_ready(event_state* e, std::uint32_t m);
  void complete(event_state* e, std::uint32_t m, bool pass);

  // --- running it
  void rank_by_remaining_work();
  std::uint32_t waiter(const out_edge& oe) const noexcept;
  unsigned lane() const noexcept;
  serial_queue& queue_named(const std::string& name, std::map<std::string, std::unique_ptr<serial_queue>>& in);
  void schedule(event_state* e, std::uint32_t m);
  void push_ready(const ready_queue::entry& ready, bool drained);
  bool enlist() noexcept;
  void spawn_drain(bool behind);
  [[gnu::noinline]] void drain();
  bool stop_draining() noexcept;
  [[gnu::noinline]] bool run_chain(event_state* e, std::uint32_t m, bool one);
  void hold_queues(event_state* e, std::uint32_t m, std::size_t k);
  void release_queues(std::uint32_t m, bool last_suspended);
  void execute(event_state* e, std::uint32_t m);
  bool join(event_state* e, std::uint32_t m, std::exception_ptr& error);
  void produce_later(event_state* e, std::uint32_t m, std::exception_ptr error);
  void produce_after_acquire(event_state* e, std::uint32_t m, std::exception_ptr error);
  bool call(event_state* e, std::uint32_t m, std::exception_ptr& error);
  void fail(event_state* e, std::uint32_t m, std::exception_ptr error);
  void fail(const module_error& x) { stop_.fail(x); }
  bool stopping() const noexcept { return stop_.stopping(); }

  // --- tracing (CMS's StallMonitor view: prefetch, stall, the module's methods; docs/trace.md)
  void traced_ready(event_state* e, std::uint32_t m) noexcept;
  void traced_module(core_detail::trace::kind k, std::uint16_t sub, event_state* e, std::uint32_t m,
                     std::uint64_t t0) noexcept;

  const graph& g_;
  const run_options& o_;
  runtime& rt_;
  const bool traced_;
  stop_control& stop_;
  event_sink& done_;
  std::vector<const char*> labels_;  // interned, when traced_
  concurrent_queue tasks_;
  std::map<std::string, std::unique_ptr<serial_queue>> own_;     // one:: modules without resources, by label
  std::map<std::string, std::unique_ptr<serial_queue>> shared_;  // by resource name
  std::vector<std::vector<serial_queue*>> queues_;               // per module, in the order it takes them
  std::vector<double> priority_;                                 // per module (rank_by_remaining_work)
  ready_queue ready_;
  // Drains running or queued (drain()): at most drain_limit_, one per worker. A ready module is
  // queued as a task only where fewer drain; otherwise a drain that runs already takes it.
  std::atomic<unsigned> draining_{0};
  const unsigned drain_limit_;
  std::atomic<unsigned> drains_alive_{0};  // drain tasks not yet over (spawn_drain)
  es_state es_;                            // conditions: one cell per condition producer and interval, prefetched
  std::mutex join_m_;
  std::map<std::pair<event_state*, std::uint32_t>, std::exception_ptr> join_errors_;  // under join_m_ (join)
  std::atomic<bool> join_errors_seen_{false};
};

}  // namespace heddle::fw_detail
