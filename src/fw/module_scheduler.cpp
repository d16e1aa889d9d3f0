// SPDX-License-Identifier: Apache-2.0
// The threaded processor's module scheduler (module_scheduler.hpp): asking for modules, their
// readiness, their queues and their runs. One file, so that the path from one module's end to the
// next one's start stays whole for the compiler: the functions only this file calls are inline.
#include "module_scheduler.hpp"

#include <algorithm>
#include <utility>

#include "event_access.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/trace.hpp"
#include "module_access.hpp"
#include "run_steps.hpp"
#include "trace_kinds.hpp"

namespace heddle::fw_detail {

namespace {

// The acquire running on this thread, so that a handle it drops is completed only once the call
// has returned (or thrown: then with what it threw).
struct acquire_call {
  void* event;
  std::uint32_t module;
  bool dropped;
};
thread_local acquire_call* current_acquire = nullptr;

// The module chain running on this thread (module_scheduler::run_chain), if any: where schedule()
// leaves the best reentrant module made ready, for this thread to run next without a task.
struct module_chain {
  const void* scheduler;
  bool drains = false;  // a counted drain (not one nested in a module's wait): it empties the list itself
  event_state* e = nullptr;
  std::uint32_t m = 0;
  bool held = false;
};
constinit thread_local module_chain* current_chain HEDDLE_DETAIL_TLS_MODEL = nullptr;

// current_chain while a module's own code runs (outside_chain): no scheduler's chain, and a drain
// that the code's wait helps with (a task it runs meanwhile, nested) runs one module and returns,
// so that the waiting code goes on as soon as its wait is over, as it would after any one task.
constinit module_chain in_module_code{nullptr};

// How many modules a drain runs between two looks at the rest of the runtime's work (a look is an
// out-of-line call: at every module it cost 150 instructions a module, at every 8th 7): where other
// tasks wait (an ExternalWork module's produce after its timer, a transition, a condition to
// make, a serial queue's turn), the drain hands itself on behind them (spawn_drain) instead of
// keeping its worker until the ready list is empty.
constexpr unsigned yield_every = 8;
struct outside_chain {
  module_chain* chain = std::exchange(current_chain, &in_module_code);
  outside_chain() = default;
  outside_chain(const outside_chain&) = delete;
  outside_chain& operator=(const outside_chain&) = delete;
  ~outside_chain() { current_chain = chain; }
};

}  // namespace

module_scheduler::module_scheduler(const graph& g, const run_options& o, runtime& rt, bool traced, stop_control& stop,
                                   event_sink& done)
    : g_(g),
      o_(o),
      rt_(rt),
      traced_(traced),
      stop_(stop),
      done_(done),
      tasks_(rt),
      ready_(rt.num_threads() + 1),
      drain_limit_(std::max(1u, rt.num_threads())),
      es_(g, [this](es_state::waiter w) { conditions_ready(static_cast<event_state*>(w.first), w.second); }) {
  if (traced_)
    for (std::uint32_t m = 0; m < g.size(); ++m) labels_.push_back(heddle::trace::intern(g.nodes[m].spec.label));
  // Queues only where a kind asks for one, all on rt_ (a default-constructed serial_queue would
  // be a queue of the default runtime, and start it): a one:: module's own, or one per shared
  // resource, which its modules hold in name order.
  queues_.resize(g.size());
  for (std::uint32_t m = 0; m < g.size(); ++m) {
    const node& n = g.nodes[m];
    if (n.kind() != module_kind::one) continue;
    const auto& resources = n.declared().resources;
    if (resources.empty()) queues_[m].push_back(&queue_named(n.spec.label, own_));
    for (const std::string& r : resources) queues_[m].push_back(&queue_named(r, shared_));
  }
  // One stream instance per event slot: no more slots than events.
  const std::uint64_t in_flight = std::max<std::uint64_t>(1, o.events_in_flight);
  prepare_streams(g, static_cast<unsigned>(std::min(in_flight, std::max<std::uint64_t>(1, o.events))));
  rank_by_remaining_work();  // after prepare_streams: it asks each module's first instance
}

// --- acquire_sink.
// From wherever the handle was completed (another thread, a future's completion, inside
// acquire): once acquire() has returned too (join), produce() becomes a task, never runs under
// the completer's feet.
void module_scheduler::acquired(void* event, std::uint32_t m, std::exception_ptr error) noexcept {
  auto* e = static_cast<event_state*>(event);
  if (join(e, m, error)) produce_later(e, m, std::move(error));
}
// done_at's task, on one of our workers: produce() runs right here (once acquire() has returned).
void module_scheduler::deadline_passed(void* event, std::uint32_t m) noexcept {
  auto* e = static_cast<event_state*>(event);
  std::exception_ptr error;
  if (join(e, m, error)) produce_after_acquire(e, m, std::move(error));
}
void module_scheduler::dropped(void* event, std::uint32_t m) noexcept {
  if (acquire_call* c = current_acquire; c && c->event == event && c->module == m) {
    c->dropped = true;  // completed when acquire() has returned or thrown
    return;
  }
  acquired(event, m, dropped_handle());
}
heddle::core_detail::runtime_core* module_scheduler::core() const noexcept {
  return heddle::core_detail::access::core_of(rt_);
}

// --- one event.

void module_scheduler::start_event(event_state* e) {
  const auto paths = static_cast<std::uint32_t>(g_.paths.size());
  e->paths_left.store(paths + 1, std::memory_order_relaxed);
  e->active.store(1, std::memory_order_relaxed);
  for (std::uint32_t p = 0; p < paths; ++p) path_stepped(e, p, step_path(g_.paths[p], 0, walker(e, p)));
  path_finished(e);  // the guard
}

inline void module_scheduler::path_stepped(event_state* e, std::uint32_t p, path_state s) {
  if (s == path_state::waiting) return;  // the filter goes on for us
  if (s == path_state::passed) e->passed[p] = 1;
  path_finished(e);
}

inline void module_scheduler::path_finished(event_state* e) {
  if (e->paths_left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Every path is done: the end paths.
  e->outputs_left.store(static_cast<std::uint32_t>(g_.outputs.size()) + 1, std::memory_order_relaxed);
  for (std::uint32_t out : g_.outputs) {
    if (selected(g_.nodes[out], e->passed)) request(e, out);
    else output_finished(e);
  }
  output_finished(e);
}

inline void module_scheduler::output_finished(event_state* e) {
  if (e->outputs_left.fetch_sub(1, std::memory_order_acq_rel) == 1) release(e);
}

inline void module_scheduler::release(event_state* e) {
  if (e->active.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.event_done(e);
}

// Sets the waiting bit of `edge`; true if its producer was already done.
inline bool module_scheduler::wait_edge(event_state* e, std::uint32_t edge) noexcept {
  const std::uint64_t bit = std::uint64_t{1} << (2 * (edge & 31));
  return e->edges[edge >> 5].fetch_or(bit, std::memory_order_acq_rel) & (bit << 1);
}

// Most asks find the module asked for already (a product read by several modules): that check
// stays inline, apart from the body's prologue.
inline void module_scheduler::request(event_state* e, std::uint32_t m) {
  if (e->state[m].fetch_or(event_state::requested, std::memory_order_acq_rel) & event_state::requested) return;
  request_first(e, m);
}
void module_scheduler::request_first(event_state* e, std::uint32_t m) {
  const node& n = g_.nodes[m];
  const auto producers = static_cast<std::uint32_t>(n.producers.size());
  const auto conditions = static_cast<std::uint32_t>(n.es_producers.size());
  if (traced_) e->trace_ticks[2 * m] = producers + conditions ? core_detail::trace::now() : 0;
  if (producers + conditions == 0) return schedule(e, m);
  e->state[m].fetch_add(static_cast<event_state::word>(producers + conditions + 1), std::memory_order_relaxed);
  for (std::uint32_t p : n.producers) request(e, p);
  std::uint32_t ready = conditions ? await_conditions(e, m) : 0;
  // Wait on every in-edge, a word at a time; count those already done.
  const std::uint32_t first = n.first_in_edge, last = first + producers;  // [first, last)
  for (std::uint32_t w = first >> 5; producers && w <= (last - 1) >> 5; ++w) {
    const std::uint32_t lo = std::max(first, w << 5) & 31, hi = (std::min(last, (w + 1) << 5) - 1) & 31;
    const std::uint64_t span = (hi == 31 ? ~std::uint64_t{0} : (std::uint64_t{1} << (2 * hi + 2)) - 1) &
                               ~((std::uint64_t{1} << (2 * lo)) - 1);
    const std::uint64_t waiting = span & 0x5555555555555555ull;
    const std::uint64_t old = e->edges[w].fetch_or(waiting, std::memory_order_acq_rel);
    // Usually a bit or two: clearing them one at a time costs less than std::popcount, a libgcc
    // call where the target has no popcnt instruction.
    for (std::uint64_t done = old & (waiting << 1); done; done &= done - 1) ++ready;
  }
  if ((e->state[m].fetch_sub(static_cast<event_state::word>(ready + 1), std::memory_order_acq_rel) &
       event_state::pending_mask) == ready + 1)
    schedule(e, m);
}

// Prefetches the conditions module m reads for its event's interval: each cell that is not made
// yet delivers to conditions_ready when it is (the first asker starts making it, as a task).
// Returns how many were made already.
std::uint32_t module_scheduler::await_conditions(event_state* e, std::uint32_t m) {
  std::uint32_t ready = 0;
  for (std::uint32_t q : g_.nodes[m].es_producers) {
    std::uint32_t iv = 0;
    try {
      iv = es_.interval(q, e->id.run, e->id.lumi);
    } catch (const std::exception& x) {  // no interval here: the module fails when it reads it
      fail(module_error(g_.nodes[m].spec.label, e->id.event, e->id.run, x.what()));
      ++ready;
      continue;
    }
    es_cell& cell = es_.cell(q, iv);
    bool start = false;
    if (es_.ready_or_wait(cell, {e, m}, start)) ++ready;
    else if (start) tasks_.async([this, q, iv, &cell] { es_.make(q, iv, cell); });
  }
  return ready;
}
inline void module_scheduler::conditions_ready(event_state* e, std::uint32_t m) {
  if ((e->state[m].fetch_sub(1, std::memory_order_acq_rel) & event_state::pending_mask) == 1) schedule(e, m);
}

// Module `m` is done, passing the event or not (modules other than filters pass): tell whatever
// waits for it.
inline void module_scheduler::complete(event_state* e, std::uint32_t m, bool pass) {
  if (pass && g_.nodes[m].role() == module_role::filter) e->set_pass(m);  // other modules always pass
  for (const out_edge& oe : g_.out[m]) {
    const std::uint64_t bit = std::uint64_t{2} << (2 * (oe.edge & 31));
    if (!(e->edges[oe.edge >> 5].fetch_or(bit, std::memory_order_acq_rel) & (bit >> 1))) continue;
    if (oe.target < g_.size()) {
      if ((e->state[oe.target].fetch_sub(1, std::memory_order_acq_rel) & event_state::pending_mask) == 1)
        schedule(e, oe.target);
    } else {
      const std::uint32_t step = oe.target - g_.size(), p = g_.step_path[step];
      const path& path = g_.paths[p];
      path_stepped(e, p, resume_path(path, step - path.first_step, pass, walker(e, p)));
    }
  }
  if (g_.nodes[m].on_end_path) output_finished(e);
  release(e);
}

// --- running a module.

// A module's priority: its expected time plus the longest chain of expected time that waits on
// it (its consumers, the next filter of its paths, and after a path's last filter the end paths).
// Depth first; producers form no cycle, but two paths may hold the same filters in opposite
// orders: a module met again while it is still open adds nothing, which breaks such a loop.
inline void module_scheduler::rank_by_remaining_work() {
  const std::uint32_t n = g_.size();
  enum : std::uint8_t { unseen, open, ranked };
  std::vector<std::uint8_t> mark(n, unseen);
  std::vector<double> own(n);
  priority_.assign(n, 0);
  double outputs = 0;
  for (std::uint32_t m = 0; m < n; ++m) own[m] = std::max(0.0, g_.nodes[m].first().expected_seconds());
  for (std::uint32_t o : g_.outputs) outputs = std::max(outputs, own[o]);
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (mark[root] != unseen) continue;
    mark[root] = open;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      const std::uint32_t m = stack.back().first;
      const auto& out = g_.out[m];
      std::size_t& next = stack.back().second;
      while (next < out.size() && !(waiter(out[next]) != n && mark[waiter(out[next])] == unseen)) ++next;
      if (next < out.size()) {
        const std::uint32_t w = waiter(out[next]);
        mark[w] = open;
        stack.push_back({w, 0});  // `next` is not used again before this frame is back on top
        continue;
      }
      double after = 0;
      for (const out_edge& oe : out) {
        const std::uint32_t w = waiter(oe);
        if (w == n) after = std::max(after, outputs);
        else if (mark[w] == ranked) after = std::max(after, priority_[w]);
      }
      priority_[m] = own[m] + after;
      mark[m] = ranked;
      stack.pop_back();
    }
  }
}
// The module an edge leads to: its consumer, or the next filter of the path (n after a path's
// last filter: the end paths come next).
inline std::uint32_t module_scheduler::waiter(const out_edge& oe) const noexcept {
  if (oe.target < g_.size()) return oe.target;
  const std::uint32_t step = oe.target - g_.size();
  const path& p = g_.paths[g_.step_path[step]];
  const std::uint32_t k = step - p.first_step + 1;
  return k < p.members.size() ? p.members[k] : g_.size();
}

// The ready list's lane of the calling thread: its worker's, or the last one.
inline unsigned module_scheduler::lane() const noexcept {
  const heddle::core_detail::worker* w = heddle::core_detail::current_worker;
  return w && w->core == heddle::core_detail::access::core_of(rt_) ? w->index : rt_.num_threads();
}

// A one:: module's queue: its own, or a resource's (`in`: which), made on first use.
serial_queue& module_scheduler::queue_named(const std::string& name,
                                            std::map<std::string, std::unique_ptr<serial_queue>>& in) {
  auto& q = in[name];
  if (!q) q = std::make_unique<serial_queue>(rt_, name);
  return *q;
}

inline void module_scheduler::schedule(event_state* e, std::uint32_t m) {
  if (traced_) traced_ready(e, m);
  e->active.fetch_add(1, std::memory_order_relaxed);
  if (!queues_[m].empty()) return hold_queues(e, m, 0);
  ready_queue::entry ready{priority_[m], e->id.event, e, m};
  if (module_chain* c = current_chain; c && c->scheduler == this) {
    // This thread runs it next unless it holds a better one already; the other goes to the list.
    if (!c->held) {
      c->e = e;
      c->m = m;
      c->held = true;
      return;
    }
    ready_queue::entry held{priority_[c->m], c->e->id.event, c->e, c->m};
    if (ready_queue::before(held, ready)) {
      std::swap(held, ready);
      c->e = held.state;
      c->m = held.module;
    }
    return push_ready(ready, c->drains);
  }
  push_ready(ready, false);
}

// A reentrant module that is ready (its event's active count taken), to the ready list, and a
// drain to run it unless every worker drains already: one of them takes it. `drained`: a drain
// runs on this thread and takes what it pushed before it stops, so the count is read only to
// start an idle worker, and may be a little stale.
inline void module_scheduler::push_ready(const ready_queue::entry& ready, bool drained) {
  ready_.push(ready, lane());
  // Otherwise the push goes before the count's read; a drain that stops reads the list after its
  // decrement (stop_draining): one of the two sees the other, so no entry is left with no drain.
  if (!drained) std::atomic_thread_fence(std::memory_order_seq_cst);
  if (enlist()) spawn_drain(false);
}

// A drain as a task: on this worker's deque, or `behind` what waits already, as an outsider's
// (FIFO: a worker takes its own deque's tasks and those injected before it). Counted until its last
// step, so that the scheduler outlives it: the drain that ran an event's last module still looks at
// the list after the event_done that may end the job (and the engine, and this scheduler, with it).
void module_scheduler::spawn_drain(bool behind) {
  drains_alive_.fetch_add(1, std::memory_order_relaxed);
  auto task = [this] {
    drain();
    drains_alive_.fetch_sub(1, std::memory_order_release);  // its last touch of *this
  };
  if (!behind) return tasks_.async(task);
  core_detail::inject(core(), core_detail::make_record<dispatch_detail::concurrent_task<decltype(task)>>(task));
}
module_scheduler::~module_scheduler() {
  for (unsigned n = 0; drains_alive_.load(std::memory_order_acquire) != 0;) core_detail::spin_pause(n++);
}

// One more drain, if fewer than the workers drain now.
inline bool module_scheduler::enlist() noexcept {
  for (unsigned n = draining_.load(std::memory_order_relaxed); n < drain_limit_;)
    if (draining_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return true;
  return false;
}

// A worker's drain: the ready list's best entries, each with the chain that follows from it
// (run_chain), until the list is empty. Nested in a module's wait, one module, and then a task
// takes its place if the list still needs it.
void module_scheduler::drain() {
  const bool nested = current_chain == &in_module_code;
  for (;;) {
    ready_queue::entry next;
    if (ready_.try_pop_best(lane(), next)) {
      if (run_chain(next.state, next.module, nested)) return spawn_drain(true);  // other work waits
      if (!nested) continue;
    }
    if (stop_draining()) return;
    if (!nested) continue;  // entries came in meanwhile: still counted, it goes on
    return spawn_drain(false);
  }
}

// The list looked empty (or a nested drain ran its module): true if this drain stops, false if
// entries came in meanwhile and it goes on, still counted.
inline bool module_scheduler::stop_draining() noexcept {
  draining_.fetch_sub(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // see push_ready
  return ready_.looks_empty() || !enlist();
}

// Runs module m of event e, then, with no task and no trip through the list, each module that the
// one before made ready and that is the best of them (schedule), unless this worker's own lane
// holds a better one, which runs instead (exchange_if_better), so the list's order holds as if each
// had been pushed and popped; once none was made ready, the list's best (unless `one`: then only
// the chain's own modules, handed to the list after the first). A module's own task and ready-list
// round trip were most of the threaded processor's cost per module at small module times.
// True if it stopped because other work waits (every yield_every modules it looks), with what it
// held back on the list.
bool module_scheduler::run_chain(event_state* e, std::uint32_t m, bool one) {
  module_chain c{this, !one};
  struct restore {
    module_chain* outer;
    ~restore() { current_chain = outer; }
  } r{std::exchange(current_chain, &c)};
  for (unsigned run = 1;; ++run) {
    execute(e, m);
    ready_queue::entry next;
    if (c.held) {
      c.held = false;
      next = {priority_[c.m], c.e->id.event, c.e, c.m};
      if (one) {
        push_ready(next, false);
        return false;
      }
      if (run % yield_every == 0 && core_detail::work_waiting(core())) {
        push_ready(next, true);  // this drain is still counted: its successor takes it
        return true;
      }
      ready_.exchange_if_better(next, lane());
    } else if (one || !ready_.try_pop_best(lane(), next)) {
      return false;
    } else if (run % yield_every == 0 && core_detail::work_waiting(core())) {
      push_ready(next, true);
      return true;
    }
    e = next.state;
    m = next.module;
  }
}

// The module's prefetch is over (if it had one), and from now it may stall.
inline void module_scheduler::traced_ready(event_state* e, std::uint32_t m) noexcept {
  using namespace core_detail::trace;
  const std::uint64_t ready = now();
  if (const std::uint64_t asked = e->trace_ticks[2 * m])
    emit_span(fw_detail::trace_kinds::module_prefetch, asked, ready, labels_[m], 0, e->stream, e->id.event);
  e->trace_ticks[2 * m + 1] = ready;
}
// A span of module m's for event e, from t0 to now.
inline void module_scheduler::traced_module(core_detail::trace::kind k, std::uint16_t sub, event_state* e,
                                            std::uint32_t m, std::uint64_t t0) noexcept {
  core_detail::trace::emit_span(k, t0, core_detail::trace::now(), labels_[m], sub, e->stream, e->id.event);
}

// Runs module m as an item of its k-th queue, holding (suspending) the queues before it: once
// it holds them all it executes, as an item of the last. Queues are taken in name order, so two
// modules sharing resources never hold one each while waiting for the other's.
inline void module_scheduler::hold_queues(event_state* e, std::uint32_t m, std::size_t k) {
  serial_queue* q = queues_[m][k];
  if (k + 1 == queues_[m].size()) return q->async([this, e, m] { execute(e, m); });
  q->async([this, q, e, m, k] {
    q->suspend();
    hold_queues(e, m, k + 1);
  });
}
// The module's own part is over: its queues may run their next items.
inline void module_scheduler::release_queues(std::uint32_t m, bool last_suspended) {
  const auto& qs = queues_[m];
  for (std::size_t k = 0; k + 1 < qs.size(); ++k) qs[k]->resume();
  if (last_suspended && !qs.empty()) qs.back()->resume();
}

inline void module_scheduler::execute(event_state* e, std::uint32_t m) {
  if (stopping()) {  // after an error the events in flight only drain
    release_queues(m, false);
    return complete(e, m, false);
  }
  const node& n = g_.nodes[m];
  if (e->started_ns) e->started_ns[m] = steady_now_ns();
  if (traced_) traced_module(fw_detail::trace_kinds::module_stall, 0, e, m, e->trace_ticks[2 * m + 1]);
  if (!n.first().external_work()) {
    std::exception_ptr error;
    const bool pass = call(e, m, error);
    release_queues(m, false);
    return error ? fail(e, m, std::move(error)) : complete(e, m, pass);
  }
  // ExternalWork. A serialised module keeps its queues from acquire to the end of produce, so
  // its executions never overlap, waits included.
  if (!queues_[m].empty()) queues_[m].back()->suspend();
  // Keeps the event (and the processor) alive until acquire() has returned, even if its handle
  // completes and the rest of the event finishes on another thread meanwhile.
  e->active.fetch_add(1, std::memory_order_relaxed);
  e->state[m].fetch_add(2, std::memory_order_relaxed);  // join's two ends
  acquire_call call_here{e, m, false};
  acquire_call* outer = std::exchange(current_acquire, &call_here);
  std::exception_ptr thrown;
  try {
    const outside_chain user_code;
    const event ev = event_access::make(*e, g_, m);
    const event_setup setup = event_access::setup(g_, m, &es_, *e);
    const std::uint64_t t0 = traced_ ? core_detail::trace::now() : 0;
    module_access::acquire(n.instance(e->stream), ev, setup, handle(e, m));
    if (traced_) traced_module(fw_detail::trace_kinds::module, 1, e, m, t0);
  } catch (...) {
    thrown = std::current_exception();
  }
  current_acquire = outer;
  if (call_here.dropped) acquired(e, m, thrown ? thrown : dropped_handle());
  else if (thrown)
    fail(module_error(n.spec.label, e->id.event, e->id.run, exception_text(thrown)));  // its handle was completed first
  std::exception_ptr error;
  if (join(e, m, error)) produce_later(e, m, std::move(error));  // acquire() returned after its handle was completed
  release(e);
}

// ExternalWork's two ends: the handle completed (with `error` if it failed) and acquire()
// returned. produce() waits for both, so that it never runs while acquire() is still returning
// (a handle may be completed inside acquire, or elsewhere before it returns): a stream:: or one::
// module's members need no lock between the two. The module's state word, whose count is 0 once
// the module is scheduled, counts the two ends down (execute sets it to 2); an end's error waits
// in join_errors_ for the other. True for the second end, with the error to fail the module with
// (the first one's) in `error`.
inline bool module_scheduler::join(event_state* e, std::uint32_t m, std::exception_ptr& error) {
  if (error) {
    std::lock_guard lock(join_m_);
    join_errors_.try_emplace({e, m}, error);
    join_errors_seen_.store(true, std::memory_order_relaxed);
  }
  if ((e->state[m].fetch_sub(1, std::memory_order_acq_rel) & event_state::pending_mask) != 1) return false;
  if (join_errors_seen_.load(std::memory_order_relaxed)) {  // set before the other end's fetch_sub
    std::lock_guard lock(join_m_);
    if (auto it = join_errors_.find({e, m}); it != join_errors_.end()) {
      error = std::move(it->second);
      join_errors_.erase(it);
    }
  }
  return true;
}

inline void module_scheduler::produce_later(event_state* e, std::uint32_t m, std::exception_ptr error) {
  tasks_.async([this, e, m, error = std::move(error)]() mutable { produce_after_acquire(e, m, std::move(error)); });
}

inline void module_scheduler::produce_after_acquire(event_state* e, std::uint32_t m, std::exception_ptr error) {
  bool pass = false;
  if (!error && !stopping()) pass = call(e, m, error);
  release_queues(m, true);
  if (error) fail(e, m, std::move(error));
  else complete(e, m, pass);
}

// The module's event method (produce, filter, analyze, write), its timeline entry, and what it
// threw in `error`. Whether it passes the event.
inline bool module_scheduler::call(event_state* e, std::uint32_t m, std::exception_ptr& error) {
  const node& n = g_.nodes[m];
  try {
    event ev = event_access::make(*e, g_, m);
    const event_setup setup = event_access::setup(g_, m, &es_, *e);
    const std::uint64_t t0 = traced_ ? core_detail::trace::now() : 0;
    const bool pass = [&] {
      const outside_chain user_code;
      return module_access::call(n.instance(e->stream), ev, setup);
    }();
    if (traced_) traced_module(fw_detail::trace_kinds::module, 0, e, m, t0);
    if (o_.record) o_.record->record({m, e->id.event, e->started_ns[m], steady_now_ns()});
    return pass;
  } catch (...) {
    error = std::current_exception();
    return false;
  }
}

inline void module_scheduler::fail(event_state* e, std::uint32_t m, std::exception_ptr error) {
  fail(module_error(g_.nodes[m].spec.label, e->id.event, e->id.run, exception_text(error)));
  complete(e, m, false);
}

}  // namespace heddle::fw_detail
