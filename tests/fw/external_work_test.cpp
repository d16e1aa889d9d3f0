// SPDX-License-Identifier: Apache-2.0
// ExternalWork: acquire starts asynchronous work and returns; produce runs once the handle is
// completed, from any thread; nothing holds a thread in between; misuse fails the module, never
// the process, and never hangs.
#include <gtest/gtest.h>

#include <heddle/async/timer.hpp>
#include <heddle/fw.hpp>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;
using fw_test::decl;
using namespace std::chrono_literals;

// acquire hands its handle to `start`; produce puts the event number times 3. Of kind global::, or
// one:: (on its own queue, or on `resources`).
struct external_calls {
  using starter = std::function<void(const event&, async_handle)>;
  explicit external_calls(starter s) : start(std::move(s)) {}
  starter start;
  std::atomic<long> acquires{0}, produces{0};
};

class external final : public global::EDProducer<ExternalWork> {
 public:
  explicit external(external_calls* c) : c_(c), out_(produces<std::int64_t>()) {}
  void acquire(const event& e, const event_setup&, async_handle h) const override {
    c_->acquires.fetch_add(1);
    c_->start(e, std::move(h));
  }
  void produce(event& e, const event_setup&) const override {
    c_->produces.fetch_add(1);
    e.put(out_, std::int64_t(e.id().event) * 3);
  }

 private:
  external_calls* c_;
  put_token<std::int64_t> out_;
};

class external_one final : public one::EDProducer<ExternalWork> {
 public:
  external_one(external_calls* c, const std::vector<std::string>& resources) : c_(c), out_(produces<std::int64_t>()) {
    for (const std::string& r : resources) r.empty() ? uses_resource() : uses_resource(r);
  }
  void acquire(const event& e, const event_setup&, async_handle h) override {
    c_->acquires.fetch_add(1);
    c_->start(e, std::move(h));
  }
  void produce(event& e, const event_setup&) override {
    c_->produces.fetch_add(1);
    e.put(out_, std::int64_t(e.id().event) * 3);
  }

 private:
  external_calls* c_;
  put_token<std::int64_t> out_;
};

struct setup {
  process p;
  external_calls calls;
  external_calls* ext = &calls;
  std::atomic<long> wrong{0};
  // A global:: module, or with `one` a one:: module on `resources` ("" the legacy resource).
  explicit setup(external_calls::starter s, bool one = false, std::vector<std::string> resources = {})
      : calls(std::move(s)) {
    if (one) p.add<external_one>({"ext"}, &calls, resources);
    else p.add<external>({"ext"}, &calls);
    fw_test::add_probe(p, decl("check", module_role::filter, {"ext"}), [this](const fw_test::inputs& in) {
      if (in[0] != std::int64_t(in.number()) * 3) wrong.fetch_add(1);
      return 1;
    });
    p.add_path("p", {"check"});
  }
};

std::string failure(process& p, bool single, std::uint64_t events = 10) {
  try {
    (single ? run_single_threaded : run_threaded)(p, fw_test::options(events, 4));
  } catch (const module_error& e) {
    return e.what();
  }
  return "";
}

TEST(ExternalWork, CompletedFromAnotherThread) {
  std::vector<std::thread> helpers;
  std::mutex m;
  setup s([&](const event&, async_handle h) {
    std::lock_guard lock(m);
    helpers.emplace_back([h = std::move(h)]() mutable {
      std::this_thread::sleep_for(1ms);
      h.done();
    });
  });
  const run_report r = run_threaded(s.p, fw_test::options(40, 8));
  for (auto& t : helpers) t.join();
  EXPECT_EQ(r.events, 40u);
  EXPECT_EQ(s.ext->acquires.load(), 40);
  EXPECT_EQ(s.ext->produces.load(), 40);
  EXPECT_EQ(s.wrong.load(), 0);
}

TEST(ExternalWork, AfterAFutureAndAtADeadline) {
  for (bool single : {true, false}) {
    setup a([](const event&, async_handle h) { h.after(heddle::sleep_for(200us)); });
    const run_report ra = (single ? run_single_threaded : run_threaded)(a.p, fw_test::options(30, 6));
    EXPECT_EQ(ra.events, 30u);
    EXPECT_EQ(a.wrong.load(), 0);
    setup b([](const event&, async_handle h) { h.done_at(std::chrono::steady_clock::now() + 200us); });
    const run_report rb = (single ? run_single_threaded : run_threaded)(b.p, fw_test::options(30, 6));
    EXPECT_EQ(rb.events, 30u);
    EXPECT_EQ(b.wrong.load(), 0);
    EXPECT_EQ(ra.checksum, rb.checksum);
  }
}

// With one worker, every event in flight gets its acquire before any handle completes: the
// handles are completed only once all 8 are held, which would never happen if a waiting module
// held the worker.
TEST(ExternalWork, NoThreadIsHeldWhileWaiting) {
  heddle_test::watchdog dog("external work holds no thread", std::chrono::seconds(60));
  std::mutex m;
  std::vector<async_handle> held;
  std::atomic<long> most{0};
  constexpr std::uint64_t in_flight = 8;
  setup s([&](const event&, async_handle h) {
    std::vector<async_handle> release;
    {
      std::lock_guard lock(m);
      held.push_back(std::move(h));
      most = std::max<long>(most, long(held.size()));
      if (held.size() == in_flight) release.swap(held);
    }
    for (auto& x : release) x.done();
  });
  run_options o = fw_test::options(64, in_flight, 1);
  const run_report r = run_threaded(s.p, o);
  EXPECT_EQ(r.events, 64u);
  EXPECT_EQ(most.load(), long(in_flight));
  EXPECT_EQ(s.wrong.load(), 0);
}

TEST(ExternalWork, SerialisedModulesKeepTheirQueueWhileWaiting) {
  for (const std::vector<std::string>& resources :
       {std::vector<std::string>{}, std::vector<std::string>{""}, std::vector<std::string>{"gpu"}}) {
    std::atomic<int> now{0}, most{0};
    setup s(
        [&](const event&, async_handle h) {
          const int n = now.fetch_add(1) + 1;
          most = std::max(most.load(), n);
          h.after(heddle::sleep_for(300us).then([&] { now.fetch_sub(1); }));
        },
        true, resources);
    const run_report r = run_threaded(s.p, fw_test::options(40, 8, 2));
    EXPECT_EQ(r.events, 40u);
    EXPECT_EQ(most.load(), 1) << (resources.empty() ? "own queue" : "resource '" + resources[0] + "'");
    EXPECT_EQ(s.wrong.load(), 0);
  }
}

TEST(ExternalWork, FailuresNameTheModuleAndTheEvent) {
  for (bool single : {true, false}) {
    setup failed([](const event& e, async_handle h) {
      if (e.id().event == 3) h.fail(std::make_exception_ptr(std::runtime_error("device lost")));
      else h.done();
    });
    EXPECT_NE(failure(failed.p, single).find("module 'ext' failed on event 3 (run 1): device lost"), std::string::npos)
        << failure(failed.p, single);

    // With events in flight, any of the first ones may be the first to fail; the reference
    // processor fails on event 0.
    const std::string first = single ? "module 'ext' failed on event 0 (run 1): " : "module 'ext' failed on event ";
    setup dropped([](const event&, async_handle) {});
    const std::string d = failure(dropped.p, single);
    EXPECT_NE(d.find(first), std::string::npos) << d;
    EXPECT_NE(d.find("acquire dropped its handle without completing it"), std::string::npos) << d;

    setup thrown_first([](const event&, async_handle) { throw std::runtime_error("no such device"); });
    const std::string t = failure(thrown_first.p, single);
    EXPECT_NE(t.find(first), std::string::npos) << t;
    EXPECT_NE(t.find("no such device"), std::string::npos) << t;

    setup failed_future([](const event&, async_handle h) {
      h.after(heddle::task([]() { throw std::runtime_error("remote call failed"); }));
    });
    EXPECT_NE(failure(failed_future.p, single).find("remote call failed"), std::string::npos);
  }
}

TEST(ExternalWork, AHandleCompletesOnce) {
  std::atomic<int> second_call{0};
  setup s([&](const event&, async_handle h) {
    h.done();
    try {
      h.done();
    } catch (const std::logic_error&) {
      second_call.fetch_add(1);
    }
  });
  const run_report r = run_threaded(s.p, fw_test::options(10, 2));
  EXPECT_EQ(r.events, 10u);
  EXPECT_EQ(second_call.load(), 10);
}

// acquire written as a coroutine: the future<void> overload's body co_awaits a timer and a task
// (holding no thread meanwhile) and leaves its result where produce finds it; a failure after a
// co_await fails the module for the event, as a failed future does.
class co_external final : public global::EDProducer<ExternalWork> {
 public:
  explicit co_external(bool fail) : fail_(fail), out_(produces<std::int64_t>()) {}
  heddle::future<void> acquire(const event& e, const event_setup&) const override {
    const std::uint64_t n = e.id().event;  // `e` is valid until the first suspension only: read it before
    co_await heddle::sleep_for(200us);
    const std::int64_t tripled = co_await heddle::task([n] { return std::int64_t(n) * 3; });
    if (fail_ && n == 3) throw std::runtime_error("the device went away");
    std::lock_guard lock(m_);
    acquired_[n] = tripled;
  }
  void produce(event& e, const event_setup&) const override {
    std::int64_t v;
    {
      std::lock_guard lock(m_);
      v = acquired_.at(e.id().event);
    }
    e.put(out_, v);
  }

 private:
  bool fail_;
  put_token<std::int64_t> out_;
  mutable std::mutex m_;
  mutable std::map<std::uint64_t, std::int64_t> acquired_;
};

TEST(ExternalWork, AcquireWrittenAsACoroutine) {
  heddle_test::watchdog dog("ExternalWork.AcquireWrittenAsACoroutine", std::chrono::seconds(60));
  for (bool single : {true, false}) {
    process p;
    std::atomic<long> wrong{0};
    p.add<co_external>({"ext"}, false);
    fw_test::add_probe(p, decl("check", module_role::filter, {"ext"}), [&wrong](const fw_test::inputs& in) {
      if (in[0] != std::int64_t(in.number()) * 3) wrong.fetch_add(1);
      return 1;
    });
    p.add_path("p", {"check"});
    // One worker and 8 events in flight: the coroutines wait side by side, none holds the worker.
    const run_report r = (single ? run_single_threaded : run_threaded)(p, fw_test::options(40, 8, 1));
    EXPECT_EQ(r.events, 40u);
    EXPECT_EQ(wrong.load(), 0);

    process failing;
    failing.add<co_external>({"ext"}, true);
    fw_test::add_probe(failing, decl("check", module_role::filter, {"ext"}), [](const fw_test::inputs&) { return 1; });
    failing.add_path("p", {"check"});
    const std::string what = failure(failing, single);
    EXPECT_NE(what.find("the device went away"), std::string::npos) << what;
    EXPECT_NE(what.find("ext"), std::string::npos) << what;
  }
}

}  // namespace
