// SPDX-License-Identifier: Apache-2.0
// What the framework promises about when modules run: on demand and once per event, inputs first,
// paths in order and stopped by a rejecting filter, end paths last, the serialisation of
// one:: modules (own queue, legacy resource), runs.
#include <gtest/gtest.h>

#include <chrono>
#include <heddle/fw.hpp>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "fw_test_support.hpp"
#include "study/study.hpp"

namespace {

using namespace heddle::fw;
using namespace heddle::fw::study;  // the timing modules the configurations use
using fw_test::add_probe;
using fw_test::decl;
using fw_test::one_decl;
using fw_test::inputs;
using fw_test::concurrency;

constexpr std::uint64_t events = 64;

class Both : public ::testing::TestWithParam<bool> {  // true: single-threaded reference
 protected:
  run_report run(process& p, std::uint64_t n = events, std::uint64_t in_flight = 8, timeline* t = nullptr) {
    run_options o = fw_test::options(n, in_flight);
    o.record = t;
    return GetParam() ? run_single_threaded(p, o) : run_threaded(p, o);
  }
};

TEST_P(Both, ProducersRunOnDemandAndOncePerEvent) {
  process p;
  auto* wanted = add_probe(p, decl("wanted"), [](const inputs& e) { return std::int64_t(e.number()); });
  auto* unwanted = add_probe(p, decl("unwanted"), [](const inputs&) { return 1; });
  auto* a = add_probe(p, decl("a", module_role::producer, {"wanted"}), [](const inputs& e) { return e[0] + 1; });
  auto* b = add_probe(p, decl("b", module_role::producer, {"wanted", "a"}), [](const inputs& e) { return e.sum(); });
  std::atomic<long> wrong{0};
  add_probe(p, decl("f", module_role::filter, {"a", "b", "wanted"}), [&](const inputs& e) {
    const std::int64_t n = std::int64_t(e.number());
    // Every input is there before the module runs (prefetched), with the right value.
    if (e[0] != n + 1 || e[1] != 2 * n + 1 || e[2] != n) wrong.fetch_add(1);
    return 1;
  });
  p.add_path("p", {"f"});
  const run_report r = run(p);
  EXPECT_EQ(r.events, events);
  EXPECT_EQ(wanted->calls.load(), long(events));  // asked for by a, b and f: once per event
  EXPECT_EQ(a->calls.load(), long(events));
  EXPECT_EQ(b->calls.load(), long(events));
  EXPECT_EQ(unwanted->calls.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(Both, ARejectingFilterEndsItsPathOnly) {
  process p;
  auto* before = add_probe(p, decl("before"), [](const inputs&) { return 1; });
  auto* after = add_probe(p, decl("after"), [](const inputs&) { return 1; });
  // Passes even events only.
  auto* odd_out = add_probe(p, decl("even", module_role::filter, {"before"}),
                            [](const inputs& e) { return e.number() % 2 == 0; });
  auto* late = add_probe(p, decl("late", module_role::filter, {"after"}), [](const inputs&) { return 1; });
  auto* other = add_probe(p, decl("other", module_role::filter), [](const inputs&) { return 1; });
  std::atomic<long> written{0};
  fw_test::probe_decl out = decl("out", module_role::output, {"before"});
  out.select_paths = {"selective"};
  auto* o = add_probe(p, out, [&](const inputs& e) {
    if (e.number() % 2 != 0) written.fetch_add(1000);  // never for a rejected event
    written.fetch_add(1);
    return e[0];
  });
  p.add_path("selective", {"even", "late"});
  p.add_path("always", {"other"});
  p.add_end_path("end", {"out"});
  run(p);
  EXPECT_EQ(before->calls.load(), long(events));
  EXPECT_EQ(odd_out->calls.load(), long(events));
  EXPECT_EQ(late->calls.load(), long(events / 2));
  EXPECT_EQ(after->calls.load(), long(events / 2));  // only late wants it
  EXPECT_EQ(other->calls.load(), long(events));
  EXPECT_EQ(o->calls.load(), long(events / 2));
  EXPECT_EQ(written.load(), long(events / 2));
}

TEST_P(Both, EndPathsStartAfterEveryPathOfTheEvent) {
  process p;
  for (const char* label : {"f0", "f1", "f2"})
    add_probe(p, decl(label, module_role::filter), [](const inputs&) {
      heddle::fw::sleep_seconds(0.0002);
      return 1;
    });
  add_probe(p, decl("o1", module_role::output), [](const inputs&) { return 1; });
  add_probe(p, decl("o2", module_role::output), [](const inputs&) { return 2; });
  p.add_path("p0", {"f0", "f1"});
  p.add_path("p1", {"f2"});
  p.add_end_path("e1", {"o1"});
  p.add_end_path("e2", {"o2", "o1"});  // o1 on two end paths still runs once
  timeline t;
  run(p, 24, 6, &t);
  std::map<std::uint64_t, std::int64_t> paths_end, outputs_start;
  std::map<std::uint64_t, int> outputs;
  for (const timeline_entry& e : t.entries()) {
    if (e.module <= 2) paths_end[e.event] = std::max(paths_end[e.event], e.end_ns);
    else {
      outputs_start[e.event] = outputs_start.count(e.event) ? std::min(outputs_start[e.event], e.start_ns) : e.start_ns;
      ++outputs[e.event];
    }
  }
  ASSERT_EQ(outputs.size(), 24u);
  for (auto [event, start] : outputs_start) {
    EXPECT_GE(start, paths_end[event]) << "event " << event;
    EXPECT_EQ(outputs[event], 2) << "event " << event;
  }
}

TEST_P(Both, PathsMayShareFiltersInAnyOrder) {
  process p;
  auto* a = add_probe(p, decl("a", module_role::filter), [](const inputs& e) { return e.number() % 3 != 0; });
  auto* b = add_probe(p, decl("b", module_role::filter), [](const inputs&) { return 1; });
  p.add_path("ab", {"a", "b"});
  p.add_path("ba", {"b", "a"});
  const run_report r = run(p);
  EXPECT_EQ(r.events, events);
  EXPECT_EQ(a->calls.load(), long(events));  // once per event, whichever path gets there first
  EXPECT_EQ(b->calls.load(), long(events));
}

INSTANTIATE_TEST_SUITE_P(Processors, Both, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "SingleThreaded" : "Threaded"; });

TEST(ThreadSafety, KindsHoldUnderManyEventsInFlight) {
  heddle_test::watchdog dog("thread-safety levels", std::chrono::seconds(120));
  process p;
  concurrency instances, own_a, own_b, unsafe_all;
  auto body = [](concurrency& c, concurrency* also = nullptr) {
    return [&c, also](const inputs&) {
      c.enter();
      if (also) also->enter();
      heddle::fw::sleep_seconds(0.0002);
      if (also) also->leave();
      c.leave();
      return 1;
    };
  };
  // The reentrant module waits (at most 2 s) in its first calls for a second instance to join it:
  // a framework that runs instances of it at once gets its overlap for certain, whatever the
  // machine's load; one that serialised them would keep it waiting, alone.
  add_probe(p, decl("shared"), [&instances](const inputs&) {
    instances.enter();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (instances.most.load() < 2 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    heddle::fw::sleep_seconds(0.0002);
    instances.leave();
    return 1;
  });
  add_probe(p, one_decl("own_a"), body(own_a));
  add_probe(p, one_decl("own_b"), body(own_b));
  concurrency u1, u2, u3;
  add_probe(p, one_decl("u1", module_role::producer, {}, {""}), body(u1, &unsafe_all));
  add_probe(p, one_decl("u2", module_role::producer, {"u1"}, {""}), body(u2, &unsafe_all));
  add_probe(p, one_decl("u3", module_role::producer, {}, {""}), body(u3, &unsafe_all));
  add_probe(p, decl("f", module_role::filter, {"shared", "own_a", "own_b", "u2", "u3"}),
            [](const inputs&) { return 1; });
  p.add_path("p", {"f"});
  run_threaded(p, fw_test::options(heddle_test::scaled<std::uint64_t>(200, 60), 16, 3));
  EXPECT_EQ(own_a.most.load(), 1);
  EXPECT_EQ(own_b.most.load(), 1);
  EXPECT_EQ(unsafe_all.most.load(), 1);
  // A framework that serialised everything would pass the checks above too.
  EXPECT_GE(instances.most.load(), 2);
}

// The real minimum-bias configuration has 4 ThreadUnsafe modules and one ThreadSafeBetweenModules:
// its timeline, with timer waits (a serialised module keeps its queue while it waits), shows no
// overlap where the levels forbid it.
TEST(ThreadSafety, TheMinimumBiasTimelineHasNoForbiddenOverlap) {
  FW_TEST_NEEDS_CMS(fw_test::minbias);
  heddle_test::watchdog dog("minbias timeline", std::chrono::seconds(300));
  const process_config c = load_config(fw_test::cms(fw_test::minbias));
  std::vector<thread_type> threads;  // each module's, as make_process adds them
  for (const module_config& m : c.modules) threads.push_back(settings_of(c, m).threads);
  for (wait_mode wait : {wait_mode::as_configured, wait_mode::timer}) {
    process p = make_process(study::with_timing(c, {wait, 1e-4, 0}));
    timeline t;
    run_options o = fw_test::options(heddle_test::scaled<std::uint64_t>(40, 12), 8, 2);
    o.record = &t;
    run_threaded(p, o);
    std::vector<timeline_entry> unsafe;
    std::map<std::uint32_t, std::vector<timeline_entry>> own;
    for (const timeline_entry& e : t.entries()) {
      const thread_type tt = threads[e.module];
      if (tt == thread_type::unsafe) unsafe.push_back(e);
      if (tt == thread_type::safe_between_modules) own[e.module].push_back(e);
    }
    auto no_overlap = [](const std::vector<timeline_entry>& v, const char* what) {
      for (std::size_t i = 1; i < v.size(); ++i)
        EXPECT_GE(v[i].start_ns, v[i - 1].end_ns) << what << ": entries " << i - 1 << " and " << i << " overlap";
    };
    EXPECT_EQ(unsafe.size(), 4 * o.events);
    no_overlap(unsafe, "ThreadUnsafe modules");
    ASSERT_EQ(own.size(), 1u);
    for (auto& [m, v] : own) no_overlap(v, p.spec(m).label.c_str());
  }
}

// A module that logs run steps and events, to check the order of runs.
class run_logger final : public global::EDFilter<> {
 public:
  void begin_run(const run& r, const event_setup&) override { log("begin", r.number(), 0); }
  void end_run(run& r, const event_setup&) override { log("end", r.number(), 0); }
  bool filter(event& e, const event_setup&) const override {
    log("start", e.id().run, e.id().event);
    heddle::fw::sleep_seconds(0.0001);
    log("finish", e.id().run, e.id().event);
    return true;
  }
  struct entry {
    std::string what;
    std::uint32_t run;
    std::uint64_t event;
  };
  mutable std::vector<entry> entries;  // global:: event methods are const: their state is theirs to guard

 private:
  void log(const char* what, std::uint32_t run, std::uint64_t event) const {
    std::lock_guard lock(m_);
    entries.push_back({what, run, event});
  }
  mutable std::mutex m_;
};

TEST(Runs, EveryEventOfARunFinishesBeforeTheNextRunBegins) {
  for (bool single : {true, false}) {
    process p;
    run_logger* log = &p.add<run_logger>({"logger"});
    p.add_path("p", {"logger"});
    run_options o = fw_test::options(50, 8);
    o.events_per_run = 12;  // runs 1..5, the last with 2 events
    const run_report r = single ? run_single_threaded(p, o) : run_threaded(p, o);
    ASSERT_EQ(r.runs.size(), 5u);
    std::uint64_t total = 0, sum = 0;
    for (const run_checksum& x : r.runs) {
      total += x.events;
      sum += x.checksum;
      EXPECT_EQ(x.events, x.run == 5 ? 2u : 12u);
    }
    EXPECT_EQ(total, 50u);
    EXPECT_EQ(sum, r.checksum);

    std::uint32_t current = 0;
    bool open = false;
    std::set<std::uint64_t> started;
    std::map<std::uint32_t, int> begins, ends;
    for (const auto& e : log->entries) {
      if (e.what == "begin") {
        EXPECT_FALSE(open) << "run " << e.run << " begins inside run " << current;
        EXPECT_EQ(e.run, current + 1);
        current = e.run;
        open = true;
        ++begins[e.run];
      } else if (e.what == "end") {
        EXPECT_TRUE(open);
        EXPECT_EQ(e.run, current);
        open = false;
        ++ends[e.run];
      } else {
        EXPECT_TRUE(open) << "event " << e.event << " outside a run";
        EXPECT_EQ(e.run, current) << "event " << e.event;
        EXPECT_EQ(e.run, e.event / 12 + 1) << "event " << e.event;
        if (e.what == "start") started.insert(e.event);
      }
    }
    EXPECT_FALSE(open);
    EXPECT_EQ(started.size(), 50u);
    for (std::uint32_t run = 1; run <= 5; ++run) {
      EXPECT_EQ(begins[run], 1) << run;
      EXPECT_EQ(ends[run], 1) << run;
    }
  }
}

}  // namespace
