// The multi-threaded processor: many events in flight on one heddle runtime.
//
// A module runs once per event, when something asks for it: a path reaching a filter, a module
// that gets its product, an end path. Asking (request) marks it, asks its producers in turn, and
// waits on its in-edges; the last producer to finish, or the request itself when all were done,
// starts it as a task on the queue its thread type calls for. A finished module sets the done bit
// of each out-edge and delivers where the consumer was already waiting. No locks on this path but
// the ready lists' (one per worker, see ready_queue.hpp) and the source's, once per event.
#include <algorithm>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <map>
#include <memory>
#include <optional>

#include "es_state.hpp"
#include "event_access.hpp"
#include "event_state.hpp"
#include "ready_queue.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/trace.hpp"
#include "heddle/dispatch/concurrent_queue.hpp"
#include "heddle/dispatch/serial_queue.hpp"
#include "heddle/fw/processor.hpp"
#include "path_rule.hpp"
#include "run_steps.hpp"
#include "usage.hpp"

namespace heddle::fw {

namespace {

using detail::event_state;

using core_detail::exception_text;
using core_detail::steady_now_ns;

// The acquire running on this thread, so that a handle it drops is completed only once the call
// has returned (or thrown: then with what it threw).
struct acquire_call {
  void* event;
  std::uint32_t module;
  bool dropped;
};
thread_local acquire_call* current_acquire = nullptr;

class engine final : public detail::acquire_sink {
 public:
  engine(const detail::graph& g, const run_options& o)
      : g_(g),
        o_(o),
        rt_(runtime_options{.threads = o.threads, .spin_before_park = o.idle_spin}),
        tasks_(rt_),
        ready_(rt_.num_threads() + 1),
        es_(g, [this](detail::es_state::waiter w) { conditions_ready(static_cast<event_state*>(w.first), w.second); }),
        steps_(g, &es_),
        transitions_(rt_, "heddle::fw transitions"),
        events_in_flight_(std::max<std::uint64_t>(1, o.events_in_flight)),
        end_(o.first_event + o.events),
        max_lumis_(std::max(1u, o.concurrent_lumis)),
        next_event_(o.first_event) {
    if (traced_)
      for (std::uint32_t m = 0; m < g.size(); ++m) labels_.push_back(heddle::trace::intern(g.nodes[m].spec.label));
    // CMS's rule: a one:: module's transitions may not overlap its events, nor a stream module's
    // instances' lumi transitions the events of their stream, so such a process runs one lumi at a
    // time (a barrier between lumis, as between runs).
    for (std::uint32_t m = 0; max_lumis_ > 1 && m < g.size(); ++m)
      if (g.nodes[m].kind() != module_kind::global) {
        max_lumis_ = 1;
        lumis_limited_by_ = g.nodes[m].spec.label;
      }
    // Queues only where a kind asks for one, all on rt_ (a default-constructed serial_queue would
    // be a queue of the default runtime, and start it): a one:: module's own, or one per shared
    // resource, which its modules hold in name order.
    queues_.resize(g.size());
    for (std::uint32_t m = 0; m < g.size(); ++m) {
      const detail::node& n = g.nodes[m];
      if (n.kind() != module_kind::one) continue;
      const auto& resources = n.declared().resources;
      if (resources.empty()) queues_[m].push_back(&queue_named(n.spec.label, own_));
      for (const std::string& r : resources) queues_[m].push_back(&queue_named(r, shared_));
    }
    detail::prepare_streams(g, static_cast<unsigned>(std::min(events_in_flight_, std::max<std::uint64_t>(1, o.events))));
    rank_by_remaining_work();
  }

  ~engine() {
    for (event_state* e : slots_) event_state::destroy(e);
  }

  unsigned workers() const noexcept { return rt_.num_threads(); }

  // Runs every event; returns once the last is done (or the run stopped).
  // The times cover the events only: starting the workers is setup, like reading the configuration.
  void run(run_report& report) {
    detail::usage_probe usage;
    advance();
    std::unique_lock lock(m_);
    unsigned threads = 0;
    while (!finished_) {
      done_cv_.wait_for(lock, std::chrono::milliseconds(100));
      threads = std::max(threads, detail::usage_probe::os_threads());
      if (o_.progress) {
        const std::uint64_t done = done_;
        lock.unlock();
        o_.progress(done);
        lock.lock();
      }
    }
    report.events = done_;
    report.runs = runs_;
    for (const run_checksum& r : runs_) report.checksum += r.checksum;
    report.events_checksum = events_checksum_;
    report.peak_in_flight = peak_in_flight_;
    report.concurrent_lumis = max_lumis_;
    report.lumis_limited_by = lumis_limited_by_;
    report.os_threads = std::max(threads, detail::usage_probe::os_threads());
    report.wall_s = usage.wall_s();
    report.cpu_s = usage.cpu_s();
    lock.unlock();
    if (o_.progress) o_.progress(report.events);
  }

  std::optional<module_error>& error() { return error_; }

  // --- acquire_sink: an ExternalWork module's asynchronous part is over.
  // From wherever the handle was completed (another thread, a future's completion, inside
  // acquire): once acquire() has returned too (join), produce() becomes a task, never runs under
  // the completer's feet.
  void acquired(void* event, std::uint32_t m, std::exception_ptr error) noexcept override {
    auto* e = static_cast<event_state*>(event);
    if (join(e, m, error)) produce_later(e, m, std::move(error));
  }
  // done_at's task, on one of our workers: produce() runs right here (once acquire() has returned).
  void deadline_passed(void* event, std::uint32_t m) noexcept override {
    auto* e = static_cast<event_state*>(event);
    std::exception_ptr error;
    if (join(e, m, error)) produce_after_acquire(e, m, std::move(error));
  }
  void dropped(void* event, std::uint32_t m) noexcept override {
    if (acquire_call* c = current_acquire; c && c->event == event && c->module == m) {
      c->dropped = true;  // completed when acquire() has returned or thrown
      return;
    }
    acquired(event, m, detail::dropped_handle());
  }
  heddle::core_detail::runtime_core* core() const noexcept override { return heddle::core_detail::access::core_of(rt_); }

 private:
  // --- the source: events into slots, lumis and runs one after another.
  //
  // Everything here is decided under m_ by advance(), after whatever changed the picture (an event
  // done, a transition over), and carried out outside it: events started into free slots, and
  // transitions posted to transitions_, a serial queue, so that no two transitions ever overlap
  // and each sees the one before it done. A lumi is begun (begin_luminosity_block) before its
  // first event starts, once every event of the lumi before it has started and fewer than
  // max_lumis_ are open; it ends (end_luminosity_block) when its events are all done and every lumi
  // before it has ended; a run boundary comes when no lumi is open or beginning and the next event
  // lies in another run (or there is none): end_run, begin_run, end_job.

  // A lumi from the decision to begin it until its end transitions are done.
  struct open_lumi {
    detail::lumi_state state;  // its products
    std::uint64_t first, end;  // its events: [first, end)
    std::uint64_t started = 0, done = 0;
    bool begun = false, ending = false;
    open_lumi(const detail::graph& g, const detail::lumi_place& at, std::uint64_t first_event)
        : state(g, {at.run, at.lumi}), first(first_event), end(at.end) {}
  };

  // What advance() decided, to do outside the lock.
  struct steps {
    std::vector<event_state*> start;
    open_lumi* begin = nullptr;
    open_lumi* end = nullptr;
    bool run_boundary = false;
  };

  void advance() {
    steps todo;
    {
      std::lock_guard lock(m_);
      decide(todo);
    }
    carry_out(todo);
  }

  // Under m_.
  void decide(steps& todo) {
    // End the oldest lumi once its events are done (all of them, or those started before a stop).
    if (!lumis_.empty()) {
      open_lumi& l = *lumis_.front();
      if (l.begun && !l.ending && l.done == l.started && (l.first + l.started == l.end || stopping())) {
        l.ending = true;
        todo.end = &l;
      }
    }
    // Start the newest lumi's events into free slots.
    if (!lumis_.empty() && lumis_.back()->begun) {
      open_lumi& l = *lumis_.back();
      while (!stopping() && in_flight_ < events_in_flight_ && next_event_ < l.end) {
        event_state* e = take_slot();
        e->reset(g_, {l.state.id.run, l.state.id.lumi, next_event_++});
        ++l.started;
        ++in_flight_;
        todo.start.push_back(e);
      }
      peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
    }
    // Begin the next lumi of the run once the newest one's events have all started.
    // The first event may lie inside a run or lumi: it begins it, with that run's and lumi's ids.
    if (run_open_ && !beginning_ && !stopping() && next_event_ < end_ && lumis_.size() < max_lumis_ &&
        (lumis_.empty() || next_event_ >= lumis_.back()->end)) {
      const detail::lumi_place at = detail::lumi_of(next_event_, o_.events_per_run, o_.events_per_lumi, end_);
      if (at.run == runs_.back().run) {
        lumis_.push_back(std::make_unique<open_lumi>(g_, at, next_event_));
        ++runs_.back().lumis;
        beginning_ = true;
        todo.begin = lumis_.back().get();
      }
    }
    // Between runs (and at the start and the end): nothing open, nothing in flight.
    if (!boundary_pending_ && !beginning_ && lumis_.empty() &&
        (!run_open_ || stopping() || next_event_ >= end_ ||
         detail::run_of(next_event_, o_.events_per_run) != runs_.back().run)) {
      boundary_pending_ = true;
      todo.run_boundary = true;
    }
  }

  void carry_out(steps& todo) {
    if (todo.end) transitions_.async([this, l = todo.end] { end_lumi(*l); });
    if (todo.begin) transitions_.async([this, l = todo.begin] { begin_lumi(*l); });
    if (todo.run_boundary) transitions_.async([this] { run_boundary(); });
    for (event_state* e : todo.start) start_event(e);
  }

  void begin_lumi(open_lumi& l) {
    bool failed = false;
    try {
      steps_.begin_lumi(l.state, l.first);
    } catch (const module_error& x) {
      record_error(x);
      failed = true;
    }
    {
      std::lock_guard lock(m_);
      beginning_ = false;
      if (failed) lumis_.pop_back();  // it is the newest; none of its events started, it is not ended
      else l.begun = true;
    }
    advance();
  }

  void end_lumi(open_lumi& l) {
    try {
      steps_.end_lumi(l.state, l.end);
    } catch (const module_error& x) {
      record_error(x);
    }
    const std::uint64_t c = l.state.checksum();
    std::unique_ptr<open_lumi> over;  // its products die here, once every end transition has run
    {
      std::lock_guard lock(m_);
      runs_.back().checksum += c;
      over = std::move(lumis_.front());
      lumis_.pop_front();
    }
    over.reset();
    advance();
  }

  // No lumi open or beginning, no event in flight: end the run that was, begin the next, or end
  // the job.
  void run_boundary() {
    std::uint32_t ending = 0, beginning = 0;
    bool first = false;
    {
      std::lock_guard lock(m_);
      first = runs_.empty();
      if (run_open_) ending = runs_.back().run;
      if (!stopping() && next_event_ < end_) beginning = detail::run_of(next_event_, o_.events_per_run);
    }
    try {
      if (first) steps_.begin_job(next_event_);
      if (ending) end_run();
      if (beginning) {
        run_ = std::make_unique<detail::run_state>(g_, beginning);
        steps_.begin(*run_, next_event_);
      }
    } catch (const module_error& x) {
      record_error(x);
      beginning = 0;
    }
    if (!beginning) {  // the job is over (after its last run, or an error)
      bool failed = false;
      {
        std::lock_guard lock(m_);
        failed = error_.has_value();
      }
      try {
        steps_.end_job(next_event_, failed);
      } catch (const module_error& x) {
        record_error(x);
      }
      std::lock_guard lock(m_);
      finished_ = true;
      done_cv_.notify_all();
      return;  // the engine may be gone as soon as the lock is released
    }
    {
      std::lock_guard lock(m_);
      runs_.push_back({beginning, 0, 0});
      run_open_ = true;
      boundary_pending_ = false;
    }
    advance();
  }

  // The open run's end_run transitions; its products count in its checksum, also when one of
  // them threw (as a lumi's do), and live until then.
  void end_run() {
    std::exception_ptr error;
    try {
      steps_.end(*run_, next_event_);
    } catch (...) {
      error = std::current_exception();
    }
    const std::uint64_t c = run_->checksum();
    {
      std::lock_guard lock(m_);
      runs_.back().checksum += c;
    }
    run_.reset();
    if (error) std::rethrow_exception(error);
  }

  event_state* take_slot() {
    if (!free_.empty()) {
      event_state* e = free_.back();
      free_.pop_back();
      return e;
    }
    slots_.push_back(event_state::make(g_, static_cast<unsigned>(slots_.size()), o_.record != nullptr, traced_));
    return slots_.back();
  }

  void event_done(event_state* e) {
    if (traced_) {
      core_detail::trace::record r{e->trace_begin, core_detail::trace::now(), e->id.event, {nullptr},
                                   detail::trace_kinds::event, 0, e->stream};
      r.value = std::uint64_t{e->id.run} << 32 | e->id.lumi;
      core_detail::trace::emit(r);
    }
    detail::event_checksum sum;
    for (std::uint32_t m = 0; m < g_.size(); ++m)
      if (e->state[m].load(std::memory_order_relaxed) & event_state::requested) sum.module(g_.nodes[m], e->module_digest(g_, m));
    for (std::size_t p = 0; p < g_.paths.size(); ++p) sum.path(g_.paths[p], e->passed[p] != 0);
    const std::uint64_t c = sum.finish(e->id.event);
    e->release_products(g_);

    steps todo;
    {
      std::lock_guard lock(m_);
      runs_.back().checksum += c;
      events_checksum_ += c;
      ++runs_.back().events;
      ++done_;
      --in_flight_;
      for (const auto& l : lumis_)  // at most max_lumis_
        if (l->state.id.lumi == e->id.lumi) ++l->done;
      free_.push_back(e);  // taken again first: the next event reuses the slot while it is warm
      decide(todo);
    }
    carry_out(todo);
  }

  // --- one event.

  void start_event(event_state* e) {
    if (traced_) e->trace_begin = core_detail::trace::now();
    const auto paths = static_cast<std::uint32_t>(g_.paths.size());
    e->paths_left.store(paths + 1, std::memory_order_relaxed);
    e->active.store(1, std::memory_order_relaxed);
    for (std::uint32_t p = 0; p < paths; ++p) path_stepped(e, p, detail::step_path(g_.paths[p], 0, walker(e, p)));
    path_finished(e);  // the guard
  }

  // One path of one event, as path_rule.hpp steps it: a filter has decided once its step's edge
  // is done; one that has not goes on with the path when it completes (complete()).
  struct path_walker {
    engine& en;
    event_state* e;
    const std::uint32_t* step_edge;  // the path's steps' edges
    void ask(std::uint32_t f) { en.request(e, f); }
    bool decided(std::uint32_t, std::uint32_t k) noexcept { return wait_edge(e, step_edge[k]); }
    bool passes(std::uint32_t f) const noexcept {
      return en.g_.nodes[f].role() != module_role::filter || e->passes_event(f);
    }
  };
  path_walker walker(event_state* e, std::uint32_t p) noexcept {
    return {*this, e, g_.step_edge.data() + g_.paths[p].first_step};
  }

  void path_stepped(event_state* e, std::uint32_t p, detail::path_state s) {
    if (s == detail::path_state::waiting) return;  // the filter goes on for us
    if (s == detail::path_state::passed) e->passed[p] = 1;
    path_finished(e);
  }

  void path_finished(event_state* e) {
    if (e->paths_left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // Every path is done: the end paths.
    e->outputs_left.store(static_cast<std::uint32_t>(g_.outputs.size()) + 1, std::memory_order_relaxed);
    for (std::uint32_t out : g_.outputs) {
      if (detail::selected(g_.nodes[out], e->passed)) request(e, out);
      else output_finished(e);
    }
    output_finished(e);
  }

  void output_finished(event_state* e) {
    if (e->outputs_left.fetch_sub(1, std::memory_order_acq_rel) == 1) release(e);
  }

  void release(event_state* e) {
    if (e->active.fetch_sub(1, std::memory_order_acq_rel) == 1) event_done(e);
  }

  // Sets the waiting bit of `edge`; true if its producer was already done.
  static bool wait_edge(event_state* e, std::uint32_t edge) noexcept {
    const std::uint64_t bit = std::uint64_t{1} << (2 * (edge & 31));
    return e->edges[edge >> 5].fetch_or(bit, std::memory_order_acq_rel) & (bit << 1);
  }

  // Most asks find the module asked for already (a product read by several modules): that check
  // stays inline, apart from the body's prologue.
  void request(event_state* e, std::uint32_t m) {
    if (e->state[m].fetch_or(event_state::requested, std::memory_order_acq_rel) & event_state::requested) return;
    request_first(e, m);
  }
  [[gnu::noinline]] void request_first(event_state* e, std::uint32_t m) {
    const detail::node& n = g_.nodes[m];
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
      ready += static_cast<std::uint32_t>(std::popcount(old & (waiting << 1)));
    }
    if ((e->state[m].fetch_sub(static_cast<event_state::word>(ready + 1), std::memory_order_acq_rel) & event_state::pending_mask) ==
        ready + 1)
      schedule(e, m);
  }

  // Prefetches the conditions module m reads for its event's interval: each cell that is not made
  // yet delivers to conditions_ready when it is (the first asker starts making it, as a task).
  // Returns how many were made already.
  [[gnu::noinline]] std::uint32_t await_conditions(event_state* e, std::uint32_t m) {
    std::uint32_t ready = 0;
    for (std::uint32_t q : g_.nodes[m].es_producers) {
      std::uint32_t iv = 0;
      try {
        iv = es_.interval(q, e->id.run, e->id.lumi);
      } catch (const std::exception& x) {  // no interval here: the module fails when it reads it
        record_error(module_error(g_.nodes[m].spec.label, e->id.event, e->id.run, x.what()));
        ++ready;
        continue;
      }
      detail::es_cell& cell = es_.cell(q, iv);
      bool start = false;
      if (es_.ready_or_wait(cell, {e, m}, start)) ++ready;
      else if (start) tasks_.async([this, q, iv, &cell] { es_.make(q, iv, cell); });
    }
    return ready;
  }
  void conditions_ready(event_state* e, std::uint32_t m) {
    if ((e->state[m].fetch_sub(1, std::memory_order_acq_rel) & event_state::pending_mask) == 1) schedule(e, m);
  }

  // Module `m` is done, passing the event or not (modules other than filters pass): tell whatever
  // waits for it.
  void complete(event_state* e, std::uint32_t m, bool pass) {
    if (pass && g_.nodes[m].role() == module_role::filter) e->set_pass(m);  // other modules always pass
    for (const detail::out_edge& oe : g_.out[m]) {
      const std::uint64_t bit = std::uint64_t{2} << (2 * (oe.edge & 31));
      if (!(e->edges[oe.edge >> 5].fetch_or(bit, std::memory_order_acq_rel) & (bit >> 1))) continue;
      if (oe.target < g_.size()) {
        if ((e->state[oe.target].fetch_sub(1, std::memory_order_acq_rel) & event_state::pending_mask) == 1)
          schedule(e, oe.target);
      } else {
        const std::uint32_t step = oe.target - g_.size(), p = g_.step_path[step];
        const detail::path& path = g_.paths[p];
        path_stepped(e, p, detail::resume_path(path, step - path.first_step, pass, walker(e, p)));
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
  void rank_by_remaining_work() {
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
        for (const detail::out_edge& oe : out) {
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
  std::uint32_t waiter(const detail::out_edge& oe) const noexcept {
    if (oe.target < g_.size()) return oe.target;
    const std::uint32_t step = oe.target - g_.size();
    const detail::path& p = g_.paths[g_.step_path[step]];
    const std::uint32_t k = step - p.first_step + 1;
    return k < p.members.size() ? p.members[k] : g_.size();
  }

  // The ready list's lane of the calling thread: its worker's, or the last one.
  unsigned lane() const noexcept {
    const heddle::core_detail::worker* w = heddle::core_detail::current_worker;
    return w && w->core == heddle::core_detail::access::core_of(rt_) ? w->index : rt_.num_threads();
  }

  // A one:: module's queues: its own, or its resources' in name order.
  static serial_queue& queue_named(const std::string& name, std::map<std::string, std::unique_ptr<serial_queue>>& in,
                                   runtime& rt) {
    auto& q = in[name];
    if (!q) q = std::make_unique<serial_queue>(rt, name);
    return *q;
  }
  serial_queue& queue_named(const std::string& name, std::map<std::string, std::unique_ptr<serial_queue>>& in) {
    return queue_named(name, in, rt_);
  }

  void schedule(event_state* e, std::uint32_t m) {
    if (traced_) traced_ready(e, m);
    e->active.fetch_add(1, std::memory_order_relaxed);
    if (!queues_[m].empty()) return hold_queues(e, m, 0);
    ready_.push({priority_[m], e->id.event, e, m}, lane());
    tasks_.async([this] {
      const detail::ready_queue::entry next = ready_.pop(lane());
      execute(next.state, next.module);
    });
  }

  // The module's prefetch is over (if it had one), and from now it may stall.
  void traced_ready(event_state* e, std::uint32_t m) noexcept {
    using namespace core_detail::trace;
    const std::uint64_t ready = now();
    if (const std::uint64_t asked = e->trace_ticks[2 * m])
      emit_span(detail::trace_kinds::module_prefetch, asked, ready, labels_[m], 0, e->stream, e->id.event);
    e->trace_ticks[2 * m + 1] = ready;
  }
  // A span of module m's for event e, from t0 to now.
  void traced_module(core_detail::trace::kind k, std::uint16_t sub, event_state* e, std::uint32_t m,
                     std::uint64_t t0) noexcept {
    core_detail::trace::emit_span(k, t0, core_detail::trace::now(), labels_[m], sub, e->stream, e->id.event);
  }

  // Runs module m as an item of its k-th queue, holding (suspending) the queues before it: once
  // it holds them all it executes, as an item of the last. Queues are taken in name order, so two
  // modules sharing resources never hold one each while waiting for the other's.
  void hold_queues(event_state* e, std::uint32_t m, std::size_t k) {
    serial_queue* q = queues_[m][k];
    if (k + 1 == queues_[m].size()) return q->async([this, e, m] { execute(e, m); });
    q->async([this, q, e, m, k] {
      q->suspend();
      hold_queues(e, m, k + 1);
    });
  }
  // The module's own part is over: its queues may run their next items.
  void release_queues(std::uint32_t m, bool last_suspended) {
    const auto& qs = queues_[m];
    for (std::size_t k = 0; k + 1 < qs.size(); ++k) qs[k]->resume();
    if (last_suspended && !qs.empty()) qs.back()->resume();
  }

  void execute(event_state* e, std::uint32_t m) {
    if (stopping()) {  // after an error the events in flight only drain
      release_queues(m, false);
      return complete(e, m, false);
    }
    const detail::node& n = g_.nodes[m];
    if (e->started_ns) e->started_ns[m] = steady_now_ns();
    if (traced_) traced_module(detail::trace_kinds::module_stall, 0, e, m, e->trace_ticks[2 * m + 1]);
    if (!n.first().external_work()) {
      std::exception_ptr error;
      const bool pass = call(e, m, error);
      release_queues(m, false);
      return error ? fail(e, m, std::move(error)) : complete(e, m, pass);
    }
    // ExternalWork. A serialised module keeps its queues from acquire to the end of produce, so
    // its executions never overlap, waits included.
    if (!queues_[m].empty()) queues_[m].back()->suspend();
    // Keeps the event (and the engine) alive until acquire() has returned, even if its handle
    // completes and the rest of the event finishes on another thread meanwhile.
    e->active.fetch_add(1, std::memory_order_relaxed);
    e->state[m].fetch_add(2, std::memory_order_relaxed);  // join's two ends
    acquire_call call_here{e, m, false};
    acquire_call* outer = std::exchange(current_acquire, &call_here);
    std::exception_ptr thrown;
    try {
      const event ev = detail::event_access::make(*e, g_, m);
      const event_setup setup = detail::event_access::setup(g_, m, &es_, *e);
      const std::uint64_t t0 = traced_ ? core_detail::trace::now() : 0;
      detail::module_access::acquire(n.instance(e->stream), ev, setup, handle(e, m));
      if (traced_) traced_module(detail::trace_kinds::module, 1, e, m, t0);
    } catch (...) {
      thrown = std::current_exception();
    }
    current_acquire = outer;
    if (call_here.dropped)
      acquired(e, m, thrown ? thrown : detail::dropped_handle());
    else if (thrown)
      record_error(module_error(n.spec.label, e->id.event, e->id.run, exception_text(thrown)));  // its handle was completed first
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
  bool join(event_state* e, std::uint32_t m, std::exception_ptr& error) {
    if (error) {
      std::lock_guard lock(m_);
      join_errors_.try_emplace({e, m}, error);
      join_errors_seen_.store(true, std::memory_order_relaxed);
    }
    if ((e->state[m].fetch_sub(1, std::memory_order_acq_rel) & event_state::pending_mask) != 1) return false;
    if (join_errors_seen_.load(std::memory_order_relaxed)) {  // set before the other end's fetch_sub
      std::lock_guard lock(m_);
      if (auto it = join_errors_.find({e, m}); it != join_errors_.end()) {
        error = std::move(it->second);
        join_errors_.erase(it);
      }
    }
    return true;
  }

  void produce_later(event_state* e, std::uint32_t m, std::exception_ptr error) {
    tasks_.async([this, e, m, error = std::move(error)]() mutable { produce_after_acquire(e, m, std::move(error)); });
  }

  void produce_after_acquire(event_state* e, std::uint32_t m, std::exception_ptr error) {
    bool pass = false;
    if (!error && !stopping()) pass = call(e, m, error);
    release_queues(m, true);
    if (error) fail(e, m, std::move(error));
    else complete(e, m, pass);
  }

  // The module's event method (produce, filter, analyze, write), its timeline entry, and what it
  // threw in `error`. Whether it passes the event.
  bool call(event_state* e, std::uint32_t m, std::exception_ptr& error) {
    const detail::node& n = g_.nodes[m];
    try {
      event ev = detail::event_access::make(*e, g_, m);
      const event_setup setup = detail::event_access::setup(g_, m, &es_, *e);
      const std::uint64_t t0 = traced_ ? core_detail::trace::now() : 0;
      const bool pass = detail::module_access::call(n.instance(e->stream), ev, setup);
      if (traced_) traced_module(detail::trace_kinds::module, 0, e, m, t0);
      if (o_.record) o_.record->record({m, e->id.event, e->started_ns[m], steady_now_ns()});
      return pass;
    } catch (...) {
      error = std::current_exception();
      return false;
    }
  }

  void fail(event_state* e, std::uint32_t m, std::exception_ptr error) {
    record_error(module_error(g_.nodes[m].spec.label, e->id.event, e->id.run, exception_text(error)));
    complete(e, m, false);
  }

  void record_error(const module_error& x) {
    std::lock_guard lock(m_);
    if (!error_) error_ = x;
    stopping_.store(true, std::memory_order_relaxed);
  }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }

  const detail::graph& g_;
  const run_options& o_;
  // A run begun while tracing records per module and event (CMS's StallMonitor view): prefetch,
  // stall, the module's methods, and each event from source to output (docs/trace.md).
  const bool traced_ = core_detail::trace::on();
  std::vector<const char*> labels_;  // interned, when traced_
  runtime rt_;
  concurrent_queue tasks_;
  std::map<std::string, std::unique_ptr<serial_queue>> own_;     // one:: modules without resources, by label
  std::map<std::string, std::unique_ptr<serial_queue>> shared_;  // by resource name
  std::vector<std::vector<serial_queue*>> queues_;               // per module, in the order it takes them
  std::vector<double> priority_;   // per module (rank_by_remaining_work)
  detail::ready_queue ready_;
  detail::es_state es_;  // conditions: one cell per condition producer and interval, prefetched
  detail::run_steps steps_;
  serial_queue transitions_;  // every transition (job, run, lumi), one at a time
  const std::uint64_t events_in_flight_;
  const std::uint64_t end_;         // one past the last event: first_event + events
  unsigned max_lumis_ = 1;          // lumis open at once
  std::string lumis_limited_by_;    // the one:: or stream module that limited max_lumis_ to 1

  std::mutex m_;
  std::condition_variable done_cv_;
  std::vector<event_state*> slots_, free_;
  std::uint64_t next_event_, in_flight_ = 0, peak_in_flight_ = 0, done_ = 0;  // next_event_ from first_event
  std::uint64_t events_checksum_ = 0;  // run_report::events_checksum
  std::vector<run_checksum> runs_;
  std::deque<std::unique_ptr<open_lumi>> lumis_;  // open (or beginning) lumis, oldest first
  std::unique_ptr<detail::run_state> run_;  // the open run's products: only transitions touch it
  bool run_open_ = false;          // a run has begun (runs_.back()); its end is the next boundary
  bool beginning_ = false;         // lumis_.back()'s begin transition is posted, not over
  bool boundary_pending_ = false;  // a run boundary is posted, not over
  bool finished_ = false;
  std::atomic<bool> stopping_{false};
  std::optional<module_error> error_;
  std::map<std::pair<event_state*, std::uint32_t>, std::exception_ptr> join_errors_;  // under m_ (join)
  std::atomic<bool> join_errors_seen_{false};
};

}  // namespace

run_report run_threaded(process& p, const run_options& o) {
  p.finalize();
  check_run_options(o);  // before the workers start
  detail::usage_probe::reset_peak_rss();
  run_report report;
  std::optional<module_error> error;
  {
    engine e(detail::graph_of(p), o);
    report.workers = e.workers();
    e.run(report);
    error = std::move(e.error());
  }
  report.peak_rss_bytes = detail::usage_probe::peak_rss_bytes();
  if (error) throw *error;
  return report;
}

}  // namespace heddle::fw
