// SPDX-License-Identifier: Apache-2.0
// The single-threaded reference processor, the study's baseline: one event at a time, each path's
// filters in order, each producer run recursively where it is first asked for. No queues, no
// tasks, no atomics on the way: it is also the yardstick of the framework's overhead.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "es_state.hpp"
#include "event_access.hpp"
#include "graph.hpp"
#include "heddle/fw/processor.hpp"
#include "path_rule.hpp"
#include "run_steps.hpp"
#include "transition_plan.hpp"
#include "usage.hpp"

namespace heddle::fw {

namespace {

// Where an ExternalWork module's handle is completed: the reference waits for it right there.
class blocking_sink final : public fw_detail::acquire_sink {
 public:
  void acquired(void*, std::uint32_t, std::exception_ptr error) noexcept override {
    error_ = std::move(error);
    done_.store(true, std::memory_order_release);
    done_.notify_one();
  }
  void dropped(void* e, std::uint32_t m) noexcept override { acquired(e, m, fw_detail::dropped_handle()); }
  heddle::core_detail::runtime_core* core() const noexcept override { return nullptr; }

  void arm() noexcept { done_.store(false, std::memory_order_relaxed); }
  std::exception_ptr wait() {
    done_.wait(false, std::memory_order_acquire);
    return std::move(error_);
  }

 private:
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
};

// One event at a time: its paths in order, each producer run where it is first needed. Its own
// walker (path_rule.hpp): a filter asked for has run, so it has always decided.
class reference_event {
 public:
  reference_event(const fw_detail::graph& g, const run_options& o, fw_detail::es_state& es)
      : g_(g),
        o_(o),
        es_(es),
        state_(fw_detail::event_state::make(g, 0, false)),
        ran_(g.size()),
        passed_(g.paths.size()) {}
  ~reference_event() {
    state_->release_products(g_);
    fw_detail::event_state::destroy(state_);
  }
  reference_event(const reference_event&) = delete;
  reference_event& operator=(const reference_event&) = delete;

  // Runs event `id`; returns its share of the checksum.
  std::uint64_t run(const event_id& id) {
    const std::uint64_t e = id.event;
    state_->release_products(g_);
    state_->reset(g_, id);
    std::fill(ran_.begin(), ran_.end(), 0);
    for (std::size_t i = 0; i < g_.paths.size(); ++i)
      passed_[i] = fw_detail::step_path(g_.paths[i], 0, *this) == fw_detail::path_state::passed;
    for (std::uint32_t out : g_.outputs)
      if (fw_detail::selected(g_.nodes[out], passed_.data())) ask(out);

    fw_detail::event_checksum sum;
    for (std::uint32_t m = 0; m < g_.size(); ++m)
      if (ran_[m]) sum.module(g_.nodes[m], state_->module_digest(g_, m));
    for (std::size_t i = 0; i < g_.paths.size(); ++i) sum.path(g_.paths[i], passed_[i] != 0);
    return sum.finish(e);
  }

  // --- the walker: inputs first, depth first, so the producer runs where it is first needed.
  void ask(std::uint32_t m) {
    if (ran_[m]) return;
    for (std::uint32_t input : g_.nodes[m].producers) ask(input);
    execute(m);
  }
  bool decided(std::uint32_t, std::uint32_t) const noexcept { return true; }
  bool passes(std::uint32_t m) const noexcept {
    return g_.nodes[m].role() != module_role::filter || state_->passes_event(m);
  }

 private:
  void execute(std::uint32_t m) {
    const fw_detail::node& node = g_.nodes[m];
    const std::int64_t start = o_.record ? core_detail::steady_now_ns() : 0;
    try {
      event ev = fw_detail::event_access::make(*state_, g_, m);
      const event_setup setup = fw_detail::event_access::setup(g_, m, &es_, *state_);
      module_base& instance = node.instance(0);
      if (instance.external_work()) {
        sink_.arm();
        fw_detail::module_access::acquire(instance, ev, setup, sink_.handle(nullptr, m));
        if (std::exception_ptr error = sink_.wait()) std::rethrow_exception(error);
      }
      if (fw_detail::module_access::call(instance, ev, setup) && node.role() == module_role::filter)
        state_->set_pass(m);
    } catch (...) {
      throw module_error(node.spec.label, state_->id.event, state_->id.run,
                         core_detail::exception_text(std::current_exception()));
    }
    ran_[m] = 1;
    if (o_.record) o_.record->record({m, state_->id.event, start, core_detail::steady_now_ns()});
  }

  const fw_detail::graph& g_;
  const run_options& o_;
  fw_detail::es_state& es_;        // conditions, made in place where a module first reads them
  fw_detail::event_state* state_;  // its products and decisions
  std::vector<std::uint8_t> ran_;
  std::vector<std::uint8_t> passed_;
  blocking_sink sink_;
};

// The transition plan's steps as the reference carries them out: each transition and event at
// once, on this thread, its checksum added to the report and to its run's tally.
class reference_transitions {
 public:
  // `tally`: the plan's runs, to which the checksums are added.
  reference_transitions(const fw_detail::graph& g, const run_options& o, fw_detail::run_steps& runs,
                        reference_event& events, run_report& report, std::vector<run_checksum>& tally)
      : g_(g), o_(o), runs_(runs), events_(events), report_(report), tally_(tally), at_event_(o.first_event) {}

  void begin_job(std::uint64_t e) { runs_.begin_job(e); }
  void begin_run(std::uint32_t run, std::uint64_t e) {
    run_ = std::make_unique<fw_detail::run_state>(g_, run);
    runs_.begin(*run_, e);
  }
  void end_run(std::uint32_t, std::uint64_t next) {
    runs_.end(*run_, next);
    count(run_->checksum());
    run_.reset();  // its products live until every end_run has run
  }
  void begin_lumi(const fw_detail::transition_plan::lumi& l) {
    lumi_ = std::make_unique<fw_detail::lumi_state>(g_, l.id);
    runs_.begin_lumi(*lumi_, l.first);
  }
  void end_lumi(const fw_detail::transition_plan::lumi& l) {
    runs_.end_lumi(*lumi_, l.end);
    count(lumi_->checksum());
    lumi_.reset();  // its products live until every end transition has run
  }
  void event(const event_id& id) {
    at_event_ = id.event;
    const std::uint64_t c = events_.run(id);
    count(c);
    report_.events_checksum += c;
    ++report_.events;
    if (o_.progress && std::chrono::steady_clock::now() - last_progress_ >= std::chrono::milliseconds(100)) {
      last_progress_ = std::chrono::steady_clock::now();
      o_.progress(report_.events);
    }
  }

  // The last event begun (the first event before any): what end_job is told after an error.
  std::uint64_t at_event() const noexcept { return at_event_; }

 private:
  void count(std::uint64_t c) {
    report_.checksum += c;
    tally_.back().checksum += c;
  }

  const fw_detail::graph& g_;
  const run_options& o_;
  fw_detail::run_steps& runs_;
  reference_event& events_;
  run_report& report_;
  std::vector<run_checksum>& tally_;
  std::uint64_t at_event_;
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
  std::unique_ptr<fw_detail::lumi_state> lumi_;  // the open luminosity block
  std::unique_ptr<fw_detail::run_state> run_;    // the open run
};

}  // namespace

// Here rather than in a file of its own: both processors call it, the reference first.
void check_run_options(const run_options& o) {
  constexpr std::uint64_t most = ~std::uint64_t{0}, most_id = ~std::uint32_t{0};
  if (o.first_event > most - o.events)
    throw config_error("run options: first_event " + std::to_string(o.first_event) + " + events " +
                       std::to_string(o.events) + " passes 2^64 - 1");
  if (o.events == 0) return;
  const std::uint64_t last = o.first_event + o.events - 1;
  // Runs and lumis grow with the event number, lumis within their run: the last event has the
  // largest run, and the largest lumi is the last event's or, where the events cross a run
  // boundary, that of a run's last event.
  if (o.events_per_run != 0 && last / o.events_per_run >= most_id)
    throw config_error("run options: event " + std::to_string(last) + " would be in run " +
                       std::to_string(last / o.events_per_run + 1) + ", past 2^32 - 1 (events_per_run " +
                       std::to_string(o.events_per_run) + ")");
  if (o.events_per_lumi == 0) return;
  const std::uint64_t in_run = o.events_per_run == 0                                         ? last
                               : o.first_event / o.events_per_run != last / o.events_per_run ? o.events_per_run - 1
                                                                                             : last % o.events_per_run;
  if (in_run / o.events_per_lumi >= most_id)
    throw config_error("run options: event " + std::to_string(last) + " would be in lumi " +
                       std::to_string(in_run / o.events_per_lumi + 1) + " of its run, past 2^32 - 1 (events_per_lumi " +
                       std::to_string(o.events_per_lumi) + ")");
}

run_report run_single_threaded(process& p, const run_options& o) {
  p.finalize();
  check_run_options(o);
  const fw_detail::graph& g = fw_detail::graph_of(p);
  fw_detail::es_state es(g);
  reference_event event(g, o, es);
  fw_detail::run_steps runs(g, &es);

  fw_detail::usage_probe::reset_peak_rss();
  fw_detail::usage_probe usage;
  run_report report;
  report.workers = 1;

  fw_detail::prepare_streams(g, 1);
  fw_detail::transition_plan plan({.first_event = o.first_event,
                                   .events = o.events,
                                   .events_per_run = o.events_per_run,
                                   .events_per_lumi = o.events_per_lumi});
  reference_transitions to(g, o, runs, event, report, plan.runs());
  std::uint64_t end_at = 0;  // what end_job is told
  try {
    end_at = fw_detail::play_in_order(plan, to);
  } catch (const module_error&) {
    // The job stops at once: no further lumi or run transition; the modules that began end, told
    // that the job failed (module_base::job_failed). The first error is the one reported.
    try {
      runs.end_job(to.at_event(), true);
    } catch (const module_error&) {
    }
    throw;
  }
  runs.end_job(end_at, false);
  report.runs = plan.runs();
  if (o.progress) o.progress(report.events);

  report.wall_s = usage.wall_s();
  report.cpu_s = usage.cpu_s();
  report.peak_rss_bytes = fw_detail::usage_probe::peak_rss_bytes();
  report.os_threads = fw_detail::usage_probe::os_threads();
  report.peak_in_flight = o.events ? 1 : 0;
  return report;
}

}  // namespace heddle::fw
