// SPDX-License-Identifier: Apache-2.0
// The multi-threaded processor: many events in flight on one heddle runtime. As CMSSW's event
// processor composes its processing status and its workers, it composes three pieces:
// - the transition plan (transition_plan.hpp), which decides, under this file's lock, which lumi
//   ends or begins, when a run boundary comes and which events start; the single-threaded
//   processor follows the same plan;
// - the module scheduler (module_scheduler.hpp), which runs each started event's modules, on
//   demand, as tasks, and hands the event back once it is over;
// - the stop-and-error controller (stop_control.hpp): the first error is the job's, and stops it.
// This file keeps the event records (one slot per event in flight, reused), carries the plan's
// transitions out on one serial queue, so that no two ever overlap and each sees the one before it
// done, sums the checksums and reports. Its lock is taken once per event and once per transition.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "event_state.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/dispatch/serial_queue.hpp"
#include "heddle/fw/processor.hpp"
#include "module_scheduler.hpp"
#include "run_steps.hpp"
#include "stop_control.hpp"
#include "transition_plan.hpp"
#include "usage.hpp"

namespace heddle::fw {

namespace {

using fw_detail::event_state;

// How many lumis may be open at once, and which module, if any, allows only one.
struct lumi_limit {
  unsigned most;
  std::string by;  // the one:: or stream module that limited it to 1
};
lumi_limit lumis_at_once(const fw_detail::graph& g, const run_options& o) {
  lumi_limit l{std::max(1u, o.concurrent_lumis), {}};
  // CMS's rule: a one:: module's transitions may not overlap its events, nor a stream module's
  // instances' lumi transitions the events of their stream, so such a process runs one lumi at a
  // time (a barrier between lumis, as between runs).
  for (std::uint32_t m = 0; l.most > 1 && m < g.size(); ++m)
    if (g.nodes[m].kind() != module_kind::global) {
      l.most = 1;
      l.by = g.nodes[m].spec.label;
    }
  return l;
}

fw_detail::plan_options plan_of(const run_options& o, unsigned max_lumis) {
  return {.first_event = o.first_event,
          .events = o.events,
          .events_per_run = o.events_per_run,
          .events_per_lumi = o.events_per_lumi,
          .events_in_flight = std::max<std::uint64_t>(1, o.events_in_flight),
          .max_lumis = max_lumis};
}

class engine final : public fw_detail::event_sink {
 public:
  engine(const fw_detail::graph& g, const run_options& o)
      : g_(g),
        o_(o),
        rt_(runtime_options{.threads = o.threads, .spin_before_park = o.idle_spin}),
        lumis_(lumis_at_once(g, o)),
        scheduler_(g, o, rt_, traced_, stop_, *this),
        steps_(g, &scheduler_.conditions()),
        transitions_(rt_, "heddle::fw transitions"),
        plan_(plan_of(o, lumis_.most)) {}

  ~engine() {
    for (event_state* e : slots_) event_state::destroy(e);
  }

  unsigned workers() const noexcept { return rt_.num_threads(); }

  // Runs every event; returns once the last is done (or the run stopped).
  // The times cover the events only: starting the workers is setup, like reading the configuration.
  void run(run_report& report) {
    fw_detail::usage_probe usage;
    advance();
    std::unique_lock lock(m_);
    unsigned threads = 0;
    while (!plan_.over()) {
      done_cv_.wait_for(lock, std::chrono::milliseconds(100));
      threads = std::max(threads, fw_detail::usage_probe::os_threads());
      if (o_.progress) {
        const std::uint64_t done = plan_.events_done();
        lock.unlock();
        o_.progress(done);
        lock.lock();
      }
    }
    report.events = plan_.events_done();
    report.runs = plan_.runs();
    for (const run_checksum& r : report.runs) report.checksum += r.checksum;
    report.events_checksum = events_checksum_;
    report.peak_in_flight = plan_.peak_in_flight();
    report.concurrent_lumis = plan_.max_lumis();
    report.lumis_limited_by = lumis_.by;
    report.os_threads = std::max(threads, fw_detail::usage_probe::os_threads());
    report.wall_s = usage.wall_s();
    report.cpu_s = usage.cpu_s();
    lock.unlock();
    if (o_.progress) o_.progress(report.events);
  }

  std::optional<module_error> take_error() { return stop_.take_error(); }

 private:
  // --- the source: the plan's decisions, made under m_ after whatever changed the picture (an
  // event done, a transition over), carried out outside it: events started into free slots, and
  // transitions posted to transitions_.

  // What decide() took from the plan, to do outside the lock.
  struct steps {
    std::vector<event_state*> start;
    fw_detail::lumi_state* begin = nullptr;  // with its first event
    std::uint64_t begin_first = 0;
    fw_detail::lumi_state* end = nullptr;  // with its end (the next event's number)
    std::uint64_t end_next = 0;
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

  // Under m_. The open lumis' products (open_) follow the plan's open lumis, oldest first.
  void decide(steps& todo) {
    const fw_detail::transition_plan::steps s = plan_.next(stop_.stopping());
    if (s.end_lumi) {
      todo.end = open_.front().get();
      todo.end_next = plan_.oldest().end;
    }
    for (std::uint64_t k = 0; k < s.events; ++k) {
      event_state* e = take_slot();
      e->reset(g_, {s.events_in.run, s.events_in.lumi, s.first_event + k});
      todo.start.push_back(e);
    }
    if (s.begin_lumi) {
      open_.push_back(std::make_unique<fw_detail::lumi_state>(g_, plan_.newest().id));
      todo.begin = open_.back().get();
      todo.begin_first = plan_.newest().first;
    }
    todo.run_boundary = s.run_boundary;
  }

  void carry_out(steps& todo) {
    if (todo.end) transitions_.async([this, l = todo.end, next = todo.end_next] { end_lumi(*l, next); });
    if (todo.begin) transitions_.async([this, l = todo.begin, first = todo.begin_first] { begin_lumi(*l, first); });
    if (todo.run_boundary) transitions_.async([this] { run_boundary(); });
    for (event_state* e : todo.start) {
      if (traced_) e->trace_begin = core_detail::trace::now();
      scheduler_.start_event(e);
    }
  }

  void begin_lumi(fw_detail::lumi_state& l, std::uint64_t first) {
    bool failed = false;
    try {
      steps_.begin_lumi(l, first);
    } catch (const module_error& x) {
      stop_.fail(x);
      failed = true;
    }
    {
      std::lock_guard lock(m_);
      plan_.lumi_begun(!failed);
      if (failed) open_.pop_back();  // it is the newest; none of its events started, it is not ended
    }
    advance();
  }

  void end_lumi(fw_detail::lumi_state& l, std::uint64_t next) {
    try {
      steps_.end_lumi(l, next);
    } catch (const module_error& x) {
      stop_.fail(x);
    }
    const std::uint64_t c = l.checksum();
    std::unique_ptr<fw_detail::lumi_state> over;  // its products die here, once every end transition has run
    {
      std::lock_guard lock(m_);
      plan_.runs().back().checksum += c;
      over = std::move(open_.front());
      open_.pop_front();
      plan_.lumi_ended();
    }
    over.reset();
    advance();
  }

  // No lumi open or beginning, no event in flight: end the run that was, begin the next, or end
  // the job.
  void run_boundary() {
    fw_detail::transition_plan::boundary_steps b;
    {
      std::lock_guard lock(m_);
      b = plan_.boundary(stop_.stopping());
    }
    std::uint32_t beginning = b.beginning;
    try {
      if (b.begins_job) steps_.begin_job(b.event);
      if (b.ending) end_run(b.event);
      if (beginning) {
        run_ = std::make_unique<fw_detail::run_state>(g_, beginning);
        steps_.begin(*run_, b.event);
      }
    } catch (const module_error& x) {
      stop_.fail(x);
      beginning = 0;
    }
    if (!beginning) {  // the job is over (after its last run, or an error)
      try {
        steps_.end_job(b.event, stop_.failed());
      } catch (const module_error& x) {
        stop_.fail(x);
      }
      std::lock_guard lock(m_);
      plan_.job_over();
      done_cv_.notify_all();
      return;  // the engine may be gone as soon as the lock is released
    }
    {
      std::lock_guard lock(m_);
      plan_.run_begun(beginning);
    }
    advance();
  }

  // The open run's end_run transitions; its products count in its checksum, also when one of
  // them threw (as a lumi's do), and live until then.
  void end_run(std::uint64_t next) {
    std::exception_ptr error;
    try {
      steps_.end(*run_, next);
    } catch (...) {
      error = std::current_exception();
    }
    const std::uint64_t c = run_->checksum();
    {
      std::lock_guard lock(m_);
      plan_.runs().back().checksum += c;
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

  // --- event_sink: the scheduler is done with an event.
  void event_done(event_state* e) override {
    if (traced_) {
      core_detail::trace::record r{e->trace_begin, core_detail::trace::now(),     e->id.event,
                                   {nullptr},      fw_detail::trace_kinds::event, 0,
                                   e->stream};
      r.value = std::uint64_t{e->id.run} << 32 | e->id.lumi;
      core_detail::trace::emit(r);
    }
    fw_detail::event_checksum sum;
    for (std::uint32_t m = 0; m < g_.size(); ++m)
      if (e->state[m].load(std::memory_order_relaxed) & event_state::requested)
        sum.module(g_.nodes[m], e->module_digest(g_, m));
    for (std::size_t p = 0; p < g_.paths.size(); ++p) sum.path(g_.paths[p], e->passed[p] != 0);
    const std::uint64_t c = sum.finish(e->id.event);
    e->release_products(g_);

    steps todo;
    {
      std::lock_guard lock(m_);
      plan_.runs().back().checksum += c;
      events_checksum_ += c;
      plan_.event_done({e->id.run, e->id.lumi});
      free_.push_back(e);  // taken again first: the next event reuses the slot while it is warm
      decide(todo);
    }
    carry_out(todo);
  }

  const fw_detail::graph& g_;
  const run_options& o_;
  // A run begun while tracing records per module and event (CMS's StallMonitor view): prefetch,
  // stall, the module's methods, and each event from source to output (docs/trace.md).
  const bool traced_ = core_detail::trace::on();
  runtime rt_;
  const lumi_limit lumis_;
  fw_detail::stop_control stop_;
  fw_detail::module_scheduler scheduler_;
  fw_detail::run_steps steps_;
  serial_queue transitions_;  // every transition (job, run, lumi), one at a time

  std::mutex m_;  // the source: plan_, slots_, free_, open_, events_checksum_
  std::condition_variable done_cv_;
  fw_detail::transition_plan plan_;
  std::vector<event_state*> slots_, free_;
  std::uint64_t events_checksum_ = 0;                        // run_report::events_checksum
  std::deque<std::unique_ptr<fw_detail::lumi_state>> open_;  // the products of the plan's open lumis, oldest first
  std::unique_ptr<fw_detail::run_state> run_;                // the open run's products: only transitions touch it
};

}  // namespace

run_report run_threaded(process& p, const run_options& o) {
  p.finalize();
  check_run_options(o);  // before the workers start
  fw_detail::usage_probe::reset_peak_rss();
  run_report report;
  std::optional<module_error> error;
  {
    engine e(fw_detail::graph_of(p), o);
    report.workers = e.workers();
    e.run(report);
    error = e.take_error();
  }
  report.peak_rss_bytes = fw_detail::usage_probe::peak_rss_bytes();
  if (error) throw *error;
  return report;
}

}  // namespace heddle::fw
