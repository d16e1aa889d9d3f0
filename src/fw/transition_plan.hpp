// SPDX-License-Identifier: Apache-2.0
// The order of a job's transitions (begin and end of the job, of each run, of each luminosity block)
// and of its events, as CMSSW's processing status decides them for its event processor. Pure data:
// no threads, no modules. A processor asks what to do next, carries it out (at once, or later on
// other threads), and reports back what is over; both processors follow it, the single-threaded one
// one step at a time (play_in_order), the threaded one under its source's lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <vector>

#include "heddle/fw/luminosity_block.hpp"
#include "heddle/fw/processor.hpp"

namespace heddle::fw_detail {

// The run an event belongs to (runs count from 1).
constexpr std::uint32_t run_of(std::uint64_t event, std::uint64_t events_per_run) noexcept {
  return events_per_run == 0 ? 1 : static_cast<std::uint32_t>(event / events_per_run + 1);
}

// Where an event lies: its run, its luminosity block (counted from 1 in each run), and the end of
// that lumi (one past its last event, at most `events`). Lumis of `per_lumi` events (0: one per
// run) restart at each run's first event, so a run of a size that is not a multiple ends with a
// shorter lumi.
struct lumi_place {
  std::uint32_t run;
  std::uint32_t lumi;
  std::uint64_t end;
};
constexpr lumi_place lumi_of(std::uint64_t event, std::uint64_t per_run, std::uint64_t per_lumi,
                             std::uint64_t events) noexcept {
  constexpr std::uint64_t most = ~std::uint64_t{0};
  const auto add = [](std::uint64_t a, std::uint64_t b) { return b > most - a ? most : a + b; };  // saturating
  const std::uint64_t run_start = per_run == 0 ? 0 : event / per_run * per_run;
  const std::uint64_t run_end = per_run == 0 ? most : add(run_start, per_run);
  const std::uint64_t in_run = event - run_start;
  const std::uint64_t lumi = per_lumi == 0 ? 0 : in_run / per_lumi;
  const std::uint64_t end = per_lumi == 0 ? run_end : std::min(run_end, add(run_start + lumi * per_lumi, per_lumi));
  return {run_of(event, per_run), static_cast<std::uint32_t>(lumi + 1), std::min(end, events)};
}

// What the plan is given: the source's events (run_options' numbering) and how much may overlap.
struct plan_options {
  std::uint64_t first_event = 0;
  std::uint64_t events = 0;
  std::uint64_t events_per_run = 0;    // 0: one run
  std::uint64_t events_per_lumi = 0;   // 0: one lumi per run
  std::uint64_t events_in_flight = 1;  // events started and not yet done, at most (at least 1)
  unsigned max_lumis = 1;              // lumis open (beginning, begun or ending) at once (at least 1)
};

// The rules. A lumi begins before its first event starts, once every event of the lumi before it
// has started and fewer than max_lumis are open; its events start while fewer than events_in_flight
// are in flight; it ends when its events are all done (all of them, or those started before a stop)
// and every lumi before it has ended. A run boundary comes when no lumi is open or beginning and the
// next event lies in another run (or there is none, or the job stops): it ends the run that was, if
// any, and begins the next one, or ends the job. The first event may lie inside a run or lumi: it
// begins it, with that run's and lumi's ids. next() may ask for a transition while the one before
// it is still being carried out: the caller runs them one at a time, in the order asked (the
// threaded processor posts them to one serial queue), so that each sees the one before it done.
//
// Not thread-safe: the caller serialises every call (the threaded processor holds its source's lock).
class transition_plan {
 public:
  // A lumi from the decision to begin it until its end transitions are over.
  struct lumi {
    luminosity_block_id id;
    std::uint64_t first, end;  // its events: [first, end)
    std::uint64_t started = 0, done = 0;
    bool begun = false, ending = false;
  };

  // What next() decided, to carry out in this order: the oldest lumi's end, the newest lumi's
  // begin, a run boundary (boundary()), then events [first_event, first_event + events) of lumi
  // `events_in` (the newest begun one).
  struct steps {
    bool end_lumi = false;                      // oldest()'s end transitions; then lumi_ended()
    bool begin_lumi = false;                    // newest()'s begin transitions; then lumi_begun()
    bool run_boundary = false;                  // boundary(); then run_begun() or job_over()
    std::uint64_t first_event = 0, events = 0;  // each started now; event_done() once each is done
    luminosity_block_id events_in{};
    bool empty() const noexcept { return !end_lumi && !begin_lumi && !run_boundary && events == 0; }
  };

  // What a run boundary does, asked for when it is carried out: begin the job (the first
  // boundary), end run `ending` (0: none open), begin run `beginning` (0: none, the job ends).
  // `event`: the next event's number, which the transitions are told.
  struct boundary_steps {
    bool begins_job = false;
    std::uint32_t ending = 0, beginning = 0;
    std::uint64_t event = 0;
  };

  explicit transition_plan(const plan_options& o)
      : o_(o),
        end_(o.first_event + o.events),
        in_flight_limit_(std::max<std::uint64_t>(1, o.events_in_flight)),
        max_lumis_(std::max(1u, o.max_lumis)),
        next_event_(o.first_event) {}

  // What may be done now that something changed (the start, an event done, a transition over).
  // `stopping`: the job stops (an error): no event starts, no lumi or run begins.
  steps next(bool stopping) {
    steps s;
    // End the oldest lumi once its events are done.
    if (!lumis_.empty()) {
      lumi& l = lumis_.front();
      if (l.begun && !l.ending && l.done == l.started && (l.first + l.started == l.end || stopping)) {
        l.ending = true;
        s.end_lumi = true;
      }
    }
    // Start the newest lumi's events.
    if (!lumis_.empty() && lumis_.back().begun) {
      lumi& l = lumis_.back();
      if (!stopping && in_flight_ < in_flight_limit_ && next_event_ < l.end) {
        s.first_event = next_event_;
        s.events = std::min(in_flight_limit_ - in_flight_, l.end - next_event_);
        s.events_in = l.id;
        next_event_ += s.events;
        l.started += s.events;
        in_flight_ += s.events;
      }
      peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
    }
    // Begin the next lumi of the run once the newest one's events have all started.
    if (run_open_ && !beginning_ && !stopping && next_event_ < end_ && lumis_.size() < max_lumis_ &&
        (lumis_.empty() || next_event_ >= lumis_.back().end)) {
      const lumi_place at = lumi_of(next_event_, o_.events_per_run, o_.events_per_lumi, end_);
      if (at.run == runs_.back().run) {
        lumis_.push_back({{at.run, at.lumi}, next_event_, at.end});
        ++runs_.back().lumis;
        beginning_ = true;
        s.begin_lumi = true;
      }
    }
    // Between runs (and at the start and the end): nothing open, nothing in flight.
    if (!boundary_pending_ && !beginning_ && lumis_.empty() &&
        (!run_open_ || stopping || next_event_ >= end_ || run_of(next_event_, o_.events_per_run) != runs_.back().run)) {
      boundary_pending_ = true;
      s.run_boundary = true;
    }
    return s;
  }

  // The lumi next() asked to end, and the one it asked to begin (while they are open).
  const lumi& oldest() const noexcept { return lumis_.front(); }
  const lumi& newest() const noexcept { return lumis_.back(); }

  // newest()'s begin transitions are over; `ok` false: one threw, and the lumi is dropped (none of
  // its events started; it is not ended).
  void lumi_begun(bool ok) {
    beginning_ = false;
    if (ok) lumis_.back().begun = true;
    else lumis_.pop_back();
  }
  // oldest()'s end transitions are over.
  void lumi_ended() { lumis_.pop_front(); }

  // An event that next() started, of lumi `in`, is done.
  void event_done(const luminosity_block_id& in) {
    --in_flight_;
    ++done_;
    ++runs_.back().events;
    for (lumi& l : lumis_)  // at most max_lumis
      if (l.id == in) ++l.done;
  }

  // The run boundary next() asked for, now that it is carried out.
  boundary_steps boundary(bool stopping) const {
    boundary_steps b;
    b.begins_job = runs_.empty();
    b.event = next_event_;
    if (run_open_) b.ending = runs_.back().run;
    if (!stopping && next_event_ < end_) b.beginning = run_of(next_event_, o_.events_per_run);
    return b;
  }
  // boundary()'s run `run` has begun.
  void run_begun(std::uint32_t run) {
    runs_.push_back({run, 0, 0});
    run_open_ = true;
    boundary_pending_ = false;
  }
  // boundary() began no run (or its begin_run threw): the job is over; end_job is the last transition.
  void job_over() noexcept { over_ = true; }

  bool over() const noexcept { return over_; }
  // The runs begun so far, with their lumis and events done; the processors add the checksums.
  std::vector<run_checksum>& runs() noexcept { return runs_; }
  const std::vector<run_checksum>& runs() const noexcept { return runs_; }
  std::uint64_t events_done() const noexcept { return done_; }
  std::uint64_t peak_in_flight() const noexcept { return peak_in_flight_; }
  unsigned max_lumis() const noexcept { return max_lumis_; }

 private:
  const plan_options o_;
  const std::uint64_t end_;  // one past the last event: first_event + events
  const std::uint64_t in_flight_limit_;
  const unsigned max_lumis_;
  std::uint64_t next_event_;
  std::uint64_t in_flight_ = 0, peak_in_flight_ = 0, done_ = 0;
  std::vector<run_checksum> runs_;
  std::deque<lumi> lumis_;         // open (or beginning) lumis, oldest first
  bool run_open_ = false;          // a run has begun (runs_.back()); its end is the next boundary
  bool beginning_ = false;         // newest()'s begin transitions are asked for, not over
  bool boundary_pending_ = false;  // a run boundary is asked for, not over
  bool over_ = false;
};

// Carries a plan out one step at a time, each transition and event done before the next is asked
// for, with `to`'s members: begin_job(event), begin_run(run, event), begin_lumi(lumi), event(id),
// end_lumi(lumi), end_run(run, event) (`event`: the next event's number, or the end). Returns at the
// end of the job with the event number end_job is to be told; the caller runs end_job, which
// depends on how the job went. What a member throws leaves the plan where it was and goes through.
template <class Transitions>
std::uint64_t play_in_order(transition_plan& plan, Transitions& to) {
  for (;;) {
    const transition_plan::steps s = plan.next(false);
    if (s.empty()) throw std::logic_error("transition_plan: nothing to do and the job is not over");
    if (s.end_lumi) {
      to.end_lumi(plan.oldest());
      plan.lumi_ended();
    }
    if (s.begin_lumi) {
      to.begin_lumi(plan.newest());
      plan.lumi_begun(true);
    }
    if (s.run_boundary) {
      const transition_plan::boundary_steps b = plan.boundary(false);
      if (b.begins_job) to.begin_job(b.event);
      if (b.ending) to.end_run(b.ending, b.event);
      if (!b.beginning) {
        plan.job_over();
        return b.event;
      }
      to.begin_run(b.beginning, b.event);
      plan.run_begun(b.beginning);
    }
    for (std::uint64_t e = s.first_event; e < s.first_event + s.events; ++e) {
      to.event(event_id{s.events_in.run, s.events_in.lumi, e});
      plan.event_done(s.events_in);
    }
  }
}

}  // namespace heddle::fw_detail
