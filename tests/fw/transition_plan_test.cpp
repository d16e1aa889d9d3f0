// SPDX-License-Identifier: Apache-2.0
// The transition plan (src/fw/transition_plan.hpp) on its own: the order of job, run and lumi
// transitions and events for a source's numbering, played one step at a time as the single-threaded
// processor plays it, and driven by hand as the threaded processor drives it: events in flight,
// lumis open at once, a stop, a lumi whose begin threw, a run whose begin threw.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "transition_plan.hpp"

namespace transition_plan_test {
namespace {

namespace fw_detail = heddle::fw_detail;
using plan = fw_detail::transition_plan;

std::string lumi_name(const plan::lumi& l) { return std::to_string(l.id.run) + ":" + std::to_string(l.id.lumi); }

// Writes each transition down as play_in_order carries it out.
struct journal {
  std::vector<std::string> seen;
  static std::string at(std::uint32_t run, std::uint64_t e) { return std::to_string(run) + "@" + std::to_string(e); }
  void begin_job(std::uint64_t e) { seen.push_back("begin_job@" + std::to_string(e)); }
  void begin_run(std::uint32_t r, std::uint64_t e) { seen.push_back("begin_run " + at(r, e)); }
  void end_run(std::uint32_t r, std::uint64_t e) { seen.push_back("end_run " + at(r, e)); }
  void begin_lumi(const plan::lumi& l) { seen.push_back("begin_lumi " + lumi_name(l) + "@" + std::to_string(l.first)); }
  void end_lumi(const plan::lumi& l) { seen.push_back("end_lumi " + lumi_name(l) + "@" + std::to_string(l.end)); }
  void event(const heddle::fw::event_id& id) {
    seen.push_back("event " + std::to_string(id.run) + ":" + std::to_string(id.lumi) + ":" + std::to_string(id.event));
  }
};

std::vector<std::string> played(const fw_detail::plan_options& o, std::uint64_t* end_job_event = nullptr) {
  plan p(o);
  journal j;
  const std::uint64_t at = fw_detail::play_in_order(p, j);
  EXPECT_TRUE(p.over());
  if (end_job_event) *end_job_event = at;
  j.seen.push_back("end_job@" + std::to_string(at));
  return j.seen;
}

using lines = std::vector<std::string>;

TEST(TransitionPlan, RunsAndLumisNestInTheOrderOfTheEvents) {
  // Runs of 4 events, lumis of 2: run 2 has one short lumi of the last event.
  EXPECT_EQ(played({.first_event = 0, .events = 5, .events_per_run = 4, .events_per_lumi = 2}),
            (lines{"begin_job@0", "begin_run 1@0", "begin_lumi 1:1@0", "event 1:1:0", "event 1:1:1", "end_lumi 1:1@2",
                   "begin_lumi 1:2@2", "event 1:2:2", "event 1:2:3", "end_lumi 1:2@4", "end_run 1@4", "begin_run 2@4",
                   "begin_lumi 2:1@4", "event 2:1:4", "end_lumi 2:1@5", "end_run 2@5", "end_job@5"}));
}

TEST(TransitionPlan, WithoutSizesTheJobIsOneRunOfOneLumi) {
  EXPECT_EQ(played({.events = 2}), (lines{"begin_job@0", "begin_run 1@0", "begin_lumi 1:1@0", "event 1:1:0",
                                          "event 1:1:1", "end_lumi 1:1@2", "end_run 1@2", "end_job@2"}));
}

TEST(TransitionPlan, ARunThatIsNotAMultipleOfTheLumiEndsWithAShorterOne) {
  EXPECT_EQ(played({.events = 6, .events_per_run = 3, .events_per_lumi = 2}),
            (lines{"begin_job@0",      "begin_run 1@0",    "begin_lumi 1:1@0", "event 1:1:0",    "event 1:1:1",
                   "end_lumi 1:1@2",   "begin_lumi 1:2@2", "event 1:2:2",      "end_lumi 1:2@3", "end_run 1@3",
                   "begin_run 2@3",    "begin_lumi 2:1@3", "event 2:1:3",      "event 2:1:4",    "end_lumi 2:1@5",
                   "begin_lumi 2:2@5", "event 2:2:5",      "end_lumi 2:2@6",   "end_run 2@6",    "end_job@6"}));
}

TEST(TransitionPlan, TheFirstEventMayLieInsideARunAndALumi) {
  // Events 5 and 6 of a job of runs of 4, lumis of 3: run 2's lumi 1 (events 4-6), from its second event.
  EXPECT_EQ(played({.first_event = 5, .events = 3, .events_per_run = 4, .events_per_lumi = 3}),
            (lines{"begin_job@5", "begin_run 2@5", "begin_lumi 2:1@5", "event 2:1:5", "event 2:1:6", "end_lumi 2:1@7",
                   "begin_lumi 2:2@7", "event 2:2:7", "end_lumi 2:2@8", "end_run 2@8", "end_job@8"}));
}

TEST(TransitionPlan, AJobWithoutEventsOnlyBeginsAndEnds) {
  EXPECT_EQ(played({.first_event = 7, .events = 0}), (lines{"begin_job@7", "end_job@7"}));
}

TEST(TransitionPlan, ALumiBeginsBesideTheOneBeforeOnceThatOnesEventsHaveStarted) {
  // Played in order, each event is done before the next step; the plan still begins the next lumi
  // as soon as every event of the one before has started (here: together with them), up to three
  // open, and never across a run boundary.
  const fw_detail::plan_options serial{.events = 9, .events_per_run = 5, .events_per_lumi = 2};
  fw_detail::plan_options wide = serial;
  wide.events_in_flight = 4;
  wide.max_lumis = 3;
  const lines seen = played(wide);
  EXPECT_EQ(seen,
            (lines{"begin_job@0",      "begin_run 1@0",    "begin_lumi 1:1@0", "begin_lumi 1:2@2", "event 1:1:0",
                   "event 1:1:1",      "end_lumi 1:1@2",   "begin_lumi 1:3@4", "event 1:2:2",      "event 1:2:3",
                   "end_lumi 1:2@4",   "event 1:3:4",      "end_lumi 1:3@5",   "end_run 1@5",      "begin_run 2@5",
                   "begin_lumi 2:1@5", "begin_lumi 2:2@7", "event 2:1:5",      "event 2:1:6",      "end_lumi 2:1@7",
                   "event 2:2:7",      "event 2:2:8",      "end_lumi 2:2@9",   "end_run 2@9",      "end_job@9"}));
  // The same transitions and events as one at a time, in another order.
  lines a = seen, b = played(serial);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

// Driving the plan by hand, as the threaded processor does: events stay in flight until told done.
TEST(TransitionPlan, EventsInFlightAreBoundedAndTheLumiEndsWhenTheLastIsDone) {
  plan p({.events = 5, .events_in_flight = 2});
  plan::steps s = p.next(false);
  ASSERT_TRUE(s.run_boundary);
  EXPECT_FALSE(s.begin_lumi);  // no run is open yet
  const plan::boundary_steps b = p.boundary(false);
  EXPECT_TRUE(b.begins_job);
  EXPECT_EQ(b.ending, 0u);
  EXPECT_EQ(b.beginning, 1u);
  p.run_begun(b.beginning);
  s = p.next(false);
  ASSERT_TRUE(s.begin_lumi);
  EXPECT_EQ(s.events, 0u);             // not before the lumi has begun
  EXPECT_TRUE(p.next(false).empty());  // its begin is outstanding
  p.lumi_begun(true);
  s = p.next(false);
  EXPECT_EQ(s.first_event, 0u);
  EXPECT_EQ(s.events, 2u);
  EXPECT_EQ(s.events_in, (heddle::fw::luminosity_block_id{1, 1}));
  EXPECT_TRUE(p.next(false).empty());  // two in flight
  p.event_done({1, 1});
  s = p.next(false);
  EXPECT_EQ(s.first_event, 2u);
  EXPECT_EQ(s.events, 1u);
  p.event_done({1, 1});
  p.event_done({1, 1});
  s = p.next(false);
  EXPECT_EQ(s.first_event, 3u);
  EXPECT_EQ(s.events, 2u);
  EXPECT_FALSE(s.end_lumi);
  p.event_done({1, 1});
  EXPECT_TRUE(p.next(false).empty());  // one still in flight
  p.event_done({1, 1});
  s = p.next(false);
  EXPECT_TRUE(s.end_lumi);
  EXPECT_FALSE(s.run_boundary);  // not while the lumi is open
  EXPECT_EQ(p.oldest().end, 5u);
  p.lumi_ended();
  s = p.next(false);
  ASSERT_TRUE(s.run_boundary);
  const plan::boundary_steps last = p.boundary(false);
  EXPECT_FALSE(last.begins_job);
  EXPECT_EQ(last.ending, 1u);
  EXPECT_EQ(last.beginning, 0u);
  EXPECT_EQ(last.event, 5u);
  p.job_over();
  EXPECT_TRUE(p.over());
  EXPECT_EQ(p.events_done(), 5u);
  EXPECT_EQ(p.peak_in_flight(), 2u);
  ASSERT_EQ(p.runs().size(), 1u);
  EXPECT_EQ(p.runs()[0].run, 1u);
  EXPECT_EQ(p.runs()[0].lumis, 1u);
  EXPECT_EQ(p.runs()[0].events, 5u);
}

// Brings a plan to its first lumi begun.
void begin_first_lumi(plan& p) {
  ASSERT_TRUE(p.next(false).run_boundary);
  p.run_begun(p.boundary(false).beginning);
  ASSERT_TRUE(p.next(false).begin_lumi);
  p.lumi_begun(true);
}

TEST(TransitionPlan, TheNextLumiBeginsOnceEveryEventOfTheOneBeforeHasStarted) {
  plan p({.events = 6, .events_per_lumi = 2, .events_in_flight = 4, .max_lumis = 2});
  begin_first_lumi(p);
  plan::steps s = p.next(false);
  EXPECT_EQ(s.events, 2u);    // all of lumi 1
  EXPECT_TRUE(s.begin_lumi);  // so lumi 2 begins beside them
  EXPECT_EQ(p.newest().id, (heddle::fw::luminosity_block_id{1, 2}));
  p.lumi_begun(true);
  s = p.next(false);
  EXPECT_EQ(s.first_event, 2u);
  EXPECT_EQ(s.events, 2u);     // lumi 2's, in the slots left
  EXPECT_FALSE(s.begin_lumi);  // two lumis open: lumi 3 waits
  p.event_done({1, 2});
  p.event_done({1, 2});
  EXPECT_TRUE(p.next(false).empty());  // lumi 2 is done, but lumis end in order
  p.event_done({1, 1});
  p.event_done({1, 1});
  s = p.next(false);
  EXPECT_TRUE(s.end_lumi);
  EXPECT_EQ(p.oldest().id, (heddle::fw::luminosity_block_id{1, 1}));
  p.lumi_ended();
  s = p.next(false);
  EXPECT_TRUE(s.end_lumi);    // now lumi 2
  EXPECT_TRUE(s.begin_lumi);  // and lumi 3, beside it
  EXPECT_EQ(p.oldest().id, (heddle::fw::luminosity_block_id{1, 2}));
  EXPECT_EQ(p.newest().id, (heddle::fw::luminosity_block_id{1, 3}));
}

TEST(TransitionPlan, AStopStartsNothingEndsWhatBeganOnceItsEventsAreDoneAndEndsTheJob) {
  plan p({.events = 10, .events_per_run = 5, .events_per_lumi = 2, .events_in_flight = 2});
  begin_first_lumi(p);
  ASSERT_EQ(p.next(false).events, 2u);
  p.event_done({1, 1});
  EXPECT_TRUE(p.next(true).empty());  // stopping: no event starts, the lumi waits for its last
  p.event_done({1, 1});
  plan::steps s = p.next(true);
  EXPECT_TRUE(s.end_lumi);
  EXPECT_FALSE(s.begin_lumi);
  p.lumi_ended();
  s = p.next(true);
  ASSERT_TRUE(s.run_boundary);
  const plan::boundary_steps b = p.boundary(true);
  EXPECT_EQ(b.ending, 1u);
  EXPECT_EQ(b.beginning, 0u);  // the job ends
  EXPECT_EQ(b.event, 2u);
}

TEST(TransitionPlan, AStopEndsALumiBeforeAllItsEventsStarted) {
  plan p({.events = 10, .events_in_flight = 3});
  begin_first_lumi(p);
  ASSERT_EQ(p.next(false).events, 3u);
  for (int i = 0; i < 3; ++i) p.event_done({1, 1});
  const plan::steps s = p.next(true);
  EXPECT_TRUE(s.end_lumi);
  EXPECT_EQ(s.events, 0u);
  EXPECT_EQ(p.oldest().started, 3u);
}

TEST(TransitionPlan, ALumiWhoseBeginThrewIsDroppedNotEnded) {
  plan p({.events = 4, .events_per_lumi = 2});
  ASSERT_TRUE(p.next(false).run_boundary);
  p.run_begun(p.boundary(false).beginning);
  ASSERT_TRUE(p.next(false).begin_lumi);
  p.lumi_begun(false);  // threw: the job stops
  const plan::steps s = p.next(true);
  EXPECT_FALSE(s.end_lumi);
  EXPECT_EQ(s.events, 0u);
  ASSERT_TRUE(s.run_boundary);
  EXPECT_EQ(p.boundary(true).ending, 1u);
  EXPECT_EQ(p.runs()[0].lumis, 1u);  // it counts as begun in the run's tally
}

TEST(TransitionPlan, ARunBoundaryComesOnceEveryLumiOfTheRunHasEnded) {
  plan p({.events = 4, .events_per_run = 2, .events_in_flight = 4, .max_lumis = 3});
  begin_first_lumi(p);
  plan::steps s = p.next(false);
  EXPECT_EQ(s.events, 2u);  // run 1's: run 2's wait for the boundary
  EXPECT_FALSE(s.begin_lumi);
  EXPECT_FALSE(s.run_boundary);
  p.event_done({1, 1});
  p.event_done({1, 1});
  ASSERT_TRUE(p.next(false).end_lumi);
  p.lumi_ended();
  s = p.next(false);
  ASSERT_TRUE(s.run_boundary);
  const plan::boundary_steps b = p.boundary(false);
  EXPECT_FALSE(b.begins_job);
  EXPECT_EQ(b.ending, 1u);
  EXPECT_EQ(b.beginning, 2u);
  EXPECT_EQ(b.event, 2u);
}

TEST(TransitionPlan, WhereAnEventLies) {
  EXPECT_EQ(fw_detail::run_of(0, 0), 1u);
  EXPECT_EQ(fw_detail::run_of(9, 4), 3u);
  const fw_detail::lumi_place at = fw_detail::lumi_of(9, 4, 3, 100);  // run 3 is events 8-11; its lumi 1 is 8-10
  EXPECT_EQ(at.run, 3u);
  EXPECT_EQ(at.lumi, 1u);
  EXPECT_EQ(at.end, 11u);
  EXPECT_EQ(fw_detail::lumi_of(9, 4, 3, 10).end, 10u);  // the job ends first
  EXPECT_EQ(fw_detail::lumi_of(~std::uint64_t{0} - 1, 0, 0, ~std::uint64_t{0}).end, ~std::uint64_t{0});  // saturates
}

}  // namespace
}  // namespace transition_plan_test
