// SPDX-License-Identifier: Apache-2.0
// The module kinds and what each promises: stream:: modules get an instance per stream, each called
// for one event at a time; one:: modules never run beside themselves, nor beside the modules that
// share a resource with them, and freely beside the others; ExternalWork in every kind, both
// forms, both processors; two abilities in one module; an exception in any transition or event
// method ends the job naming the module. (Random processes of typed modules of every kind:
// stress_test.cpp; what must not compile: abilities_compile_test.sh.)
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <heddle/async/timer.hpp>
#include <heddle/fw.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// --- when modules ran: intervals per module, checked for overlaps.

struct interval {
  clock_type::time_point start, end;
};

class intervals {
 public:
  void add(const std::string& module, interval i) {
    std::lock_guard lock(m_);
    by_module_[module].push_back(i);
  }
  // How many of the intervals of `modules`, taken together, start before an earlier one ended.
  std::size_t overlaps(const std::vector<std::string>& modules) const {
    std::vector<interval> all;
    for (const std::string& m : modules) {
      auto it = by_module_.find(m);
      if (it != by_module_.end()) all.insert(all.end(), it->second.begin(), it->second.end());
    }
    std::sort(all.begin(), all.end(), [](const interval& x, const interval& y) { return x.start < y.start; });
    std::size_t n = 0;
    clock_type::time_point last_end{};
    for (const interval& i : all) {
      if (i.start < last_end) ++n;
      last_end = std::max(last_end, i.end);
    }
    return n;
  }
  std::size_t count(const std::string& module) const {
    auto it = by_module_.find(module);
    return it == by_module_.end() ? 0 : it->second.size();
  }

 private:
  mutable std::mutex m_;
  std::map<std::string, std::vector<interval>> by_module_;
};

// Two modules meeting: each waits (up to 20 ms a call) until the other is running too, until they
// have met once. A framework that lets them run at once makes them meet for certain, whatever the
// machine's load: in the first call where both are ready, whichever starts first waits for the
// other. One that serialised them would keep each waiting alone, and they would never meet.
// (Not always in their first calls: a module that uses both of their resources holds the first
// while it waits for the second, which keeps the two apart meanwhile.)
struct rendezvous {
  std::atomic<bool> inside[2]{false, false};
  std::atomic<bool> met{false};
  void enter(int who) {
    inside[who] = true;
    const auto give_up = clock_type::now() + 20ms;
    while (!met.load() && !inside[1 - who].load() && clock_type::now() < give_up) std::this_thread::sleep_for(20us);
    if (inside[1 - who].load()) met = true;
  }
  void leave(int who) { inside[who] = false; }
};

// A one:: producer that records its intervals, keeps a counter without a lock (TSan sees any
// concurrent call), and may meet another module (rendezvous).
class serial final : public one::EDProducer<> {
 public:
  serial(intervals* log, std::vector<std::string> resources, rendezvous* meet = nullptr, int who = 0)
      : log_(log), meet_(meet), who_(who), out_(produces<std::int64_t>()) {
    for (const std::string& r : resources) r.empty() ? uses_resource() : uses_resource(r);
  }
  void produce(event& e, const event_setup&) override {
    const auto start = clock_type::now();
    if (meet_) meet_->enter(who_);
    ++calls_;  // no lock: one event at a time
    heddle::fw::sleep_seconds(0.0001);
    e.put(out_, std::int64_t(calls_));
    if (meet_) meet_->leave(who_);
    log_->add(label(), {start, clock_type::now()});
  }

 private:
  intervals* log_;
  rendezvous* meet_;
  int who_;
  put_token<std::int64_t> out_;
  std::uint64_t calls_ = 0;
};

// A filter that reads every product named in `inputs`, on a path: so every event asks for them.
void read_all(process& p, std::vector<std::string> inputs) {
  fw_test::add_probe(p, fw_test::decl("all", module_role::filter, std::move(inputs)), [](const fw_test::inputs& in) {
    (void)in.sum();
    return 1;
  });
  p.add_path("p", {"all"});
}

TEST(OneModules, NeverOverlapThemselvesNorTheirResourceSharers) {
  heddle_test::watchdog dog("one:: resources", std::chrono::seconds(120));
  intervals log;
  rendezvous free_beside;  // a (resource r) and c (its own queue) run at once
  process p("kinds");
  p.add<serial>({"a"}, &log, std::vector<std::string>{"r"}, &free_beside, 0);
  p.add<serial>({"b"}, &log, std::vector<std::string>{"r"});
  p.add<serial>({"c"}, &log, std::vector<std::string>{}, &free_beside, 1);
  read_all(p, {"a", "b", "c"});
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(200, 60);
  const run_report r = run_threaded(p, fw_test::options(events, 16, 2));
  EXPECT_EQ(r.events, events);
  for (const char* m : {"a", "b", "c"}) {
    EXPECT_EQ(log.count(m), events) << m;
    EXPECT_EQ(log.overlaps({m}), 0u) << m << " overlaps itself";
  }
  EXPECT_EQ(log.overlaps({"a", "b"}), 0u) << "a and b share resource 'r'";
  EXPECT_TRUE(free_beside.met.load()) << "c, which shares nothing with a, never ran beside it";
}

TEST(OneModules, AModuleWithTwoResourcesExcludesTheModulesOfEach) {
  heddle_test::watchdog dog("one:: two resources", std::chrono::seconds(120));
  intervals log;
  rendezvous apart;  // r1's and r2's modules share nothing: they run at once
  process p("kinds");
  p.add<serial>({"both"}, &log, std::vector<std::string>{"r2", "r1"});  // taken in name order
  p.add<serial>({"one"}, &log, std::vector<std::string>{"r1"}, &apart, 0);
  p.add<serial>({"two"}, &log, std::vector<std::string>{"r2"}, &apart, 1);
  p.add<serial>({"legacy"}, &log, std::vector<std::string>{"", "r2"});
  read_all(p, {"both", "one", "two", "legacy"});
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(200, 60);
  const run_report r = run_threaded(p, fw_test::options(events, 16, 3));
  EXPECT_EQ(r.events, events);
  EXPECT_EQ(log.overlaps({"both", "one"}), 0u);
  EXPECT_EQ(log.overlaps({"both", "two"}), 0u);
  EXPECT_EQ(log.overlaps({"legacy", "two"}), 0u);
  EXPECT_EQ(log.overlaps({"both", "legacy"}), 0u);
  EXPECT_TRUE(apart.met.load()) << "'one' (r1) and 'two' (r2) never ran at once";
}

// --- stream:: modules.

struct stream_census {
  std::atomic<int> instances{0}, begin_jobs{0}, end_jobs{0};
  std::atomic<long> overlaps{0}, wrong{0};
  std::atomic<unsigned> top_stream{0};
};

class per_stream final : public stream::EDProducer<> {
 public:
  explicit per_stream(stream_census* c) : c_(c), out_(produces<std::vector<std::int64_t>>()) {
    c->instances.fetch_add(1);
  }
  void begin_job() override { c_->begin_jobs.fetch_add(1); }
  void end_job() override { c_->end_jobs.fetch_add(1); }
  void produce(event& e, const event_setup&) override {
    if (busy_++ != 0) c_->overlaps.fetch_add(1);  // a plain counter: TSan sees two calls at once
    if (stream_ == no_stream) stream_ = e.stream();
    if (stream_ != e.stream()) c_->wrong.fetch_add(1);  // an instance serves one stream
    unsigned top = c_->top_stream.load();
    while (e.stream() > top && !c_->top_stream.compare_exchange_weak(top, e.stream())) {
    }
    seen_.push_back(std::int64_t(e.id().event));
    std::this_thread::sleep_for(20us);
    e.put(out_, std::vector<std::int64_t>{std::int64_t(e.id().event), std::int64_t(seen_.size())});
    --busy_;
  }

 private:
  static constexpr unsigned no_stream = ~0u;
  stream_census* c_;
  put_token<std::vector<std::int64_t>> out_;
  int busy_ = 0;
  unsigned stream_ = no_stream;
  std::vector<std::int64_t> seen_;  // the events this instance processed
};

class stream_check final : public stream::EDFilter<> {
 public:
  explicit stream_check(std::atomic<long>* wrong) : wrong_(wrong), in_(consumes<std::vector<std::int64_t>>("s")) {}
  bool filter(event& e, const event_setup&) override {
    if (e.get(in_).at(0) != std::int64_t(e.id().event)) wrong_->fetch_add(1);
    return true;
  }

 private:
  std::atomic<long>* wrong_;
  get_token<std::vector<std::int64_t>> in_;
};

TEST(StreamModules, OneInstancePerStreamEachOneEventAtATime) {
  heddle_test::watchdog dog("stream instances", std::chrono::seconds(120));
  for (bool single : {true, false})
    for (std::uint64_t in_flight : {1u, 4u, 16u})
      for (std::uint64_t events : {3u, 100u}) {
        if (single && in_flight > 1) continue;
        stream_census c;
        std::atomic<long> wrong{0};
        process p("kinds");
        p.add<per_stream>({"s"}, &c);
        p.add<stream_check>({"check"}, &wrong);
        p.add_path("p", {"check"});
        const run_report r = single ? run_single_threaded(p, fw_test::options(events, 1))
                                    : run_threaded(p, fw_test::options(events, in_flight, 3));
        const int streams = int(std::min(in_flight, events));
        const std::string at = (single ? "single-threaded" : "threaded") + std::string(", in flight ") +
                               std::to_string(in_flight) + ", events " + std::to_string(events);
        EXPECT_EQ(r.events, events) << at;
        EXPECT_EQ(c.instances.load(), streams) << at;
        EXPECT_EQ(c.begin_jobs.load(), streams) << at;  // the transitions reach every instance
        EXPECT_EQ(c.end_jobs.load(), streams) << at;
        EXPECT_LT(c.top_stream.load(), unsigned(streams)) << at;
        EXPECT_EQ(c.overlaps.load(), 0) << at;
        EXPECT_EQ(c.wrong.load(), 0) << at;
        EXPECT_EQ(wrong.load(), 0) << at;
      }
}

// Every instance of a stream module declares what the first declared: one that does not is refused
// when the run makes it, naming the module and the stream.
class drifting final : public stream::EDProducer<> {
 public:
  explicit drifting(std::shared_ptr<std::atomic<int>> made) {
    if (made->fetch_add(1) == 0) (void)produces<std::int64_t>();
    else (void)produces<std::int64_t>("other");
  }
  void produce(event&, const event_setup&) override {}
};

TEST(StreamModules, InstancesThatDeclareOtherProductsAreRefused) {
  process p("kinds");
  p.add<drifting>({"drift"}, std::make_shared<std::atomic<int>>(0));
  p.add_path("p", {"drift"});
  EXPECT_NO_THROW(run_single_threaded(p, fw_test::options(4, 1)));  // one stream: one instance
  try {
    run_threaded(p, fw_test::options(4, 2));
    ADD_FAILURE() << "a second instance with other products ran";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("drift: stream 1's instance declares other products than stream 0's"),
              std::string::npos)
        << e.what();
  }
}

// --- ExternalWork in every kind, both forms, both processors.

struct ext_log {
  intervals spans;  // from acquire to the end of produce
  std::atomic<long> acquires{0}, produces{0};
  std::mutex m;
  std::map<unsigned, int> busy_by_stream;  // stream modules: events at once per stream
  std::atomic<long> stream_overlaps{0};
};

// acquire: the handle form completes at once on even events and through the timer engine on odd
// ones; the future form returns heddle::sleep_for. produce puts the event number times 5.
void complete(const event& e, async_handle& h) {
  if (e.id().event % 2 == 0) h.done();
  else h.done_at(clock_type::now() + 100us);
}
heddle::future<void> wait_a_little() { return heddle::sleep_for(100us); }

template <bool Future>
class ext_global final : public global::EDProducer<ExternalWork> {
 public:
  explicit ext_global(ext_log* l) : l_(l), out_(produces<std::int64_t>()) {}
  void acquire(const event& e, const event_setup& s, async_handle h) const override {
    l_->acquires.fetch_add(1);
    if constexpr (Future) global::EDProducer<ExternalWork>::acquire(e, s, std::move(h));  // the default: the future's
    else complete(e, h);
  }
  heddle::future<void> acquire(const event&, const event_setup&) const override { return wait_a_little(); }
  void produce(event& e, const event_setup&) const override {
    l_->produces.fetch_add(1);
    e.put(out_, std::int64_t(e.id().event) * 5);
  }

 private:
  ext_log* l_;
  put_token<std::int64_t> out_;
};

// stream:: or one:: (the same signatures): records its spans, acquire to produce, which must
// never overlap for a one:: module, nor within a stream for a stream:: one.
template <class Base, bool Future>
class ext_mutable final : public Base {
 public:
  explicit ext_mutable(ext_log* l) : l_(l), out_(this->template produces<std::int64_t>()) {}
  void acquire(const event& e, const event_setup& s, async_handle h) override {
    l_->acquires.fetch_add(1);
    start_ = clock_type::now();
    enter(e);
    if constexpr (Future) Base::acquire(e, s, std::move(h));  // the default: the future's
    else complete(e, h);
  }
  heddle::future<void> acquire(const event&, const event_setup&) override { return wait_a_little(); }
  void produce(event& e, const event_setup&) override {
    l_->produces.fetch_add(1);
    e.put(out_, std::int64_t(e.id().event) * 5);
    leave(e);
    l_->spans.add(this->label(), {start_, clock_type::now()});  // start_: set by this event's acquire
  }

 private:
  void enter(const event& e) {
    std::lock_guard lock(l_->m);
    if (l_->busy_by_stream[e.stream()]++ != 0) l_->stream_overlaps.fetch_add(1);
  }
  void leave(const event& e) {
    std::lock_guard lock(l_->m);
    --l_->busy_by_stream[e.stream()];
  }
  ext_log* l_;
  put_token<std::int64_t> out_;
  clock_type::time_point start_;
};

enum class kind_form { global_handle, global_future, stream_handle, stream_future, one_handle, one_future };

void add_external(process& p, kind_form k, ext_log* l) {
  switch (k) {
    case kind_form::global_handle: p.add<ext_global<false>>({"ext"}, l); break;
    case kind_form::global_future: p.add<ext_global<true>>({"ext"}, l); break;
    case kind_form::stream_handle: p.add<ext_mutable<stream::EDProducer<ExternalWork>, false>>({"ext"}, l); break;
    case kind_form::stream_future: p.add<ext_mutable<stream::EDProducer<ExternalWork>, true>>({"ext"}, l); break;
    case kind_form::one_handle: p.add<ext_mutable<one::EDProducer<ExternalWork>, false>>({"ext"}, l); break;
    case kind_form::one_future: p.add<ext_mutable<one::EDProducer<ExternalWork>, true>>({"ext"}, l); break;
  }
}

TEST(ExternalWorkKinds, EveryKindBothFormsBothProcessors) {
  heddle_test::watchdog dog("ExternalWork kinds", std::chrono::seconds(180));
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(60, 24);
  for (kind_form k : {kind_form::global_handle, kind_form::global_future, kind_form::stream_handle,
                      kind_form::stream_future, kind_form::one_handle, kind_form::one_future})
    for (bool single : {true, false}) {
      ext_log l;
      process p("kinds");
      add_external(p, k, &l);
      std::atomic<long> wrong{0};
      fw_test::add_probe(p, fw_test::decl("check", module_role::filter, {"ext"}), [&](const fw_test::inputs& in) {
        if (in[0] != std::int64_t(in.number()) * 5) wrong.fetch_add(1);
        return 1;
      });
      p.add_path("p", {"check"});
      const run_report r = single ? run_single_threaded(p, fw_test::options(events, 1))
                                  : run_threaded(p, fw_test::options(events, 8, 2));
      const std::string at = "kind/form " + std::to_string(int(k)) + (single ? ", single-threaded" : ", threaded");
      EXPECT_EQ(r.events, events) << at;
      EXPECT_EQ(l.acquires.load(), long(events)) << at;
      EXPECT_EQ(l.produces.load(), long(events)) << at;
      EXPECT_EQ(wrong.load(), 0) << at;
      EXPECT_EQ(l.stream_overlaps.load(), 0) << at;  // stream:: and one:: modules: one event per instance at a time
      if (k == kind_form::one_handle || k == kind_form::one_future) {
        EXPECT_EQ(l.spans.overlaps({"ext"}), 0u) << at;  // a one:: module keeps its queue while it waits
      }
    }
}

// --- two abilities in one module: ExternalWork beside a test ability built as abilities.hpp says a
// per-lumi cache would be (CMS's LuminosityBlockCache<T>): its layer takes over the lumi
// transitions (final), calls the module's pure virtual that makes the lumi's cache, keeps the
// caches of the lumis in flight, and hands the event methods their lumi's.

}  // namespace

namespace kinds_test_ability {

using namespace heddle::fw;

template <class T>
struct LumiCache {};

template <class Base, class T>
class lumi_cache_layer : public Base {
 public:
  // Makes the lumi's cache, at its begin. Pure: a module that lists the ability and lacks it does not compile.
  virtual std::shared_ptr<const T> make_lumi_cache(const luminosity_block& lumi) const = 0;

 protected:
  // The cache of the event's lumi.
  const T& lumi_cache(const event& e) const {
    std::lock_guard lock(m_);
    return *caches_.at(luminosity_block_id{e.id().run, e.id().lumi});
  }

 private:
  void begin_luminosity_block(const luminosity_block& lumi, const event_setup&) final {
    std::shared_ptr<const T> made = make_lumi_cache(lumi);
    std::lock_guard lock(m_);
    caches_[lumi.id()] = std::move(made);
  }
  void end_luminosity_block(luminosity_block& lumi, const event_setup&) final {
    std::lock_guard lock(m_);
    caches_.erase(lumi.id());
  }

  mutable std::mutex m_;  // global:: with concurrent lumis: transitions beside event methods
  std::map<luminosity_block_id, std::shared_ptr<const T>> caches_;
};

}  // namespace kinds_test_ability

template <class T>
struct heddle::fw_detail::ability<kinds_test_ability::LumiCache<T>> {
  static constexpr bool allowed(module_kind k) noexcept { return k == module_kind::global; }
  template <class Base, module_kind>
  using layer = kinds_test_ability::lumi_cache_layer<Base, T>;
};

namespace {

using kinds_test_ability::LumiCache;

// Puts 1000 times the event's lumi number, from the lumi's cache, plus the event number; acquire
// reads the cache too, and counts where it disagrees with the event's lumi.
template <class... Abilities>
class lumi_external final : public global::EDProducer<Abilities...> {
 public:
  explicit lumi_external(std::atomic<long>* wrong) : wrong_(wrong), out_(this->template produces<std::int64_t>()) {}
  std::shared_ptr<const std::int64_t> make_lumi_cache(const luminosity_block& lumi) const override {
    return std::make_shared<const std::int64_t>(std::int64_t(lumi.number()) * 1000);
  }
  void acquire(const event& e, const event_setup&, async_handle h) const override {
    if (this->lumi_cache(e) != std::int64_t(e.id().lumi) * 1000) wrong_->fetch_add(1);
    complete(e, h);
  }
  void produce(event& e, const event_setup&) const override {
    e.put(out_, this->lumi_cache(e) + std::int64_t(e.id().event));
  }

 private:
  std::atomic<long>* wrong_;
  put_token<std::int64_t> out_;
};

TEST(Abilities, TwoCombineInEitherOrder) {
  heddle_test::watchdog dog("two abilities", std::chrono::seconds(120));
  const std::uint64_t events = heddle_test::scaled<std::uint64_t>(60, 24);
  for (bool external_first : {true, false})
    for (unsigned lumis_at_once : {0u, 1u, 2u}) {  // 0: single-threaded
      std::atomic<long> wrong{0};
      process p("abilities");
      using external_first_t = lumi_external<ExternalWork, LumiCache<std::int64_t>>;
      using cache_first_t = lumi_external<LumiCache<std::int64_t>, ExternalWork>;
      module_base& m = external_first ? static_cast<module_base&>(p.add<external_first_t>({"ext"}, &wrong))
                                      : p.add<cache_first_t>({"ext"}, &wrong);
      EXPECT_TRUE(m.external_work());
      fw_test::add_probe(p, fw_test::decl("check", module_role::filter, {"ext"}), [&](const fw_test::inputs& in) {
        if (in[0] != std::int64_t(in.event().id().lumi) * 1000 + std::int64_t(in.number())) wrong.fetch_add(1);
        return 1;
      });
      p.add_path("p", {"check"});
      run_options o = lumis_at_once == 0 ? fw_test::options(events, 1) : fw_test::options(events, 8, 2);
      o.events_per_lumi = 5;
      o.concurrent_lumis = std::max(1u, lumis_at_once);
      const run_report r = lumis_at_once == 0 ? run_single_threaded(p, o) : run_threaded(p, o);
      const std::string at = std::string(external_first ? "<ExternalWork, LumiCache>" : "<LumiCache, ExternalWork>") +
                             ", concurrent lumis " + std::to_string(lumis_at_once);
      EXPECT_EQ(r.events, events) << at;
      EXPECT_EQ(wrong.load(), 0) << at;
    }
}

// produce() runs once acquire() has returned, even when the handle is completed inside it (or by
// the timer engine, or by a future, before it returns): a stream:: or one:: module's members need no
// lock between its acquire and its produce either. Here acquire completes its handle, then goes on
// for a while (as code that completes first and tidies up after does); produce must not see it busy.
template <class Base>
class completes_early final : public Base {
 public:
  completes_early(std::atomic<long>* overlaps, int how)
      : overlaps_(overlaps), how_(how), out_(this->template produces<std::int64_t>()) {}
  void acquire(const event&, const event_setup&, async_handle h) override {
    busy_ = true;
    if (how_ == 0) h.done();
    else if (how_ == 1) h.done_at(clock_type::now());
    else h.after(heddle::sleep_for(0us));
    std::this_thread::sleep_for(300us);  // another worker is free to start produce meanwhile
    ++calls_;                            // a plain member: TSan sees produce reading it at the same time
    busy_ = false;
  }
  void produce(event& e, const event_setup&) override {
    if (busy_.load()) overlaps_->fetch_add(1);
    e.put(out_, std::int64_t(calls_));
  }

 private:
  std::atomic<long>* overlaps_;
  int how_;
  put_token<std::int64_t> out_;
  std::atomic<bool> busy_{false};
  int calls_ = 0;
};

TEST(ExternalWorkKinds, ProduceRunsAfterAcquireHasReturned) {
  heddle_test::watchdog dog("produce after acquire", std::chrono::seconds(120));
  for (int how : {0, 1, 2})
    for (bool one_kind : {false, true}) {
      std::atomic<long> overlaps{0};
      process p("kinds");
      if (one_kind) p.add<completes_early<one::EDProducer<ExternalWork>>>({"early"}, &overlaps, how);
      else p.add<completes_early<stream::EDProducer<ExternalWork>>>({"early"}, &overlaps, how);
      read_all(p, {"early"});
      const run_report r = run_threaded(p, fw_test::options(40, 4, 3));
      EXPECT_EQ(r.events, 40u);
      EXPECT_EQ(overlaps.load(), 0) << (one_kind ? "one::" : "stream::") << ", completed by "
                                    << (how == 0   ? "done()"
                                        : how == 1 ? "done_at(now)"
                                                   : "after(future)");
    }
}

// --- exceptions in every transition and event method.

enum class step { begin_job, begin_run, produce, acquire, end_run, end_job };
const char* name(step s) {
  static const char* const names[] = {"begin_job", "begin_run", "produce", "acquire", "end_run", "end_job"};
  return names[int(s)];
}

class thrower final : public global::EDProducer<ExternalWork> {
 public:
  explicit thrower(step s) : s_(s), out_(produces<int>()) {}
  void begin_job() override { maybe(step::begin_job); }
  void begin_run(const run& r, const event_setup&) override {
    if (r.number() == 2) maybe(step::begin_run);
  }
  void end_run(run& r, const event_setup&) override {
    if (r.number() == 2) maybe(step::end_run);
  }
  void end_job() override { maybe(step::end_job); }
  void acquire(const event& e, const event_setup&, async_handle h) const override {
    if (e.id().event == 5) maybe(step::acquire);
    h.done();
  }
  void produce(event& e, const event_setup&) const override {
    if (e.id().event == 7) maybe(step::produce);
    e.put(out_, 1);
  }

 private:
  void maybe(step s) const {
    if (s == s_) throw std::runtime_error(std::string("boom in ") + name(s));
  }
  step s_;
  put_token<int> out_;
};

// What a module saw of the job's end: whether its begin_job and end_job ran, and job_failed().
struct job_ends {
  std::atomic<int> begun{0}, ended{0}, failed{0};
};
class job_probe final : public global::EDAnalyzer<> {
 public:
  explicit job_probe(std::shared_ptr<job_ends> j) : j_(std::move(j)) {}
  void begin_job() override { j_->begun.fetch_add(1); }
  void end_job() override {
    j_->ended.fetch_add(1);
    if (job_failed()) j_->failed.fetch_add(1);
  }
  void analyze(const event&, const event_setup&) const override {}

 private:
  std::shared_ptr<job_ends> j_;
};

// end_job reaches the modules whose begin_job returned, and only those, in both processors, and
// tells them whether the job failed: after a begin_job that threw, after an event that threw, and
// not after a job that ended well.
TEST(Exceptions, EndJobReachesTheModulesThatBeganAndSaysTheJobFailed) {
  heddle_test::watchdog dog("end_job", std::chrono::seconds(120));
  for (bool single : {true, false})
    for (int how : {0, 1, 2}) {  // 0: ends well, 1: a begin_job throws, 2: an event throws
      const std::string at = std::string(single ? "single-threaded" : "threaded") + ", case " + std::to_string(how);
      auto before = std::make_shared<job_ends>(), after = std::make_shared<job_ends>();
      process p("kinds");
      p.add<job_probe>({"before"}, before);
      p.add<thrower>({"fragile"}, how == 1 ? step::begin_job : how == 2 ? step::produce : step::end_run);
      p.add<job_probe>({"after"}, after);
      p.add_path("p", {"fragile"});
      p.add_end_path("e", {"before", "after"});
      run_options o = fw_test::options(20, 4);
      if (how == 0) o.events_per_run = 20;  // one run: the thrower's end_run (run 2) never comes
      bool threw = false;
      try {
        (single ? run_single_threaded : run_threaded)(p, o);
      } catch (const module_error&) {
        threw = true;
      }
      EXPECT_EQ(threw, how != 0) << at;
      EXPECT_EQ(before->begun.load(), 1) << at;
      EXPECT_EQ(before->ended.load(), 1) << at;
      EXPECT_EQ(before->failed.load(), how != 0 ? 1 : 0) << at;
      EXPECT_EQ(after->begun.load(), how == 1 ? 0 : 1) << at;
      EXPECT_EQ(after->ended.load(), how == 1 ? 0 : 1) << at << ": end_job without begin_job";
      EXPECT_EQ(after->failed.load(), how == 2 ? 1 : 0) << at;
    }
}

// A stream module whose third instance fails its begin_job.
class third_fails final : public stream::EDProducer<> {
 public:
  explicit third_fails(std::shared_ptr<std::atomic<int>> made) : index_(made->fetch_add(1)), out_(produces<int>()) {}
  void begin_job() override {
    if (index_ == 2) throw std::runtime_error("stream 2 cannot start");
  }
  void produce(event& e, const event_setup&) override { e.put(out_, 1); }

 private:
  int index_;
  put_token<int> out_;
};

TEST(Exceptions, EveryTransitionAndEventMethodNamesTheModule) {
  heddle_test::watchdog dog("exceptions", std::chrono::seconds(120));
  for (step s : {step::begin_job, step::begin_run, step::produce, step::acquire, step::end_run, step::end_job})
    for (bool single : {true, false}) {
      process p("kinds");
      p.add<thrower>({"fragile"}, s);
      p.add_path("p", {"fragile"});
      run_options o = fw_test::options(30, 4);
      o.events_per_run = 10;
      const std::string at = std::string(name(s)) + (single ? ", single-threaded" : ", threaded");
      try {
        (single ? run_single_threaded : run_threaded)(p, o);
        ADD_FAILURE() << at << ": ran to the end";
      } catch (const module_error& e) {
        const std::string what = e.what();
        EXPECT_EQ(e.label(), "fragile") << at;
        EXPECT_NE(what.find("boom in " + std::string(name(s))), std::string::npos) << at << ": " << what;
        if (s != step::produce && s != step::acquire) {
          EXPECT_NE(what.find(std::string(name(s)) + ": boom"), std::string::npos)
              << at << ": " << what;  // the transition
        }
        if (s == step::begin_run || s == step::end_run) {
          EXPECT_EQ(e.run(), 2u) << at;
        }
        if (s == step::produce && single) {
          EXPECT_EQ(e.event(), 7u) << at;
        }
        if (s == step::acquire && single) {
          EXPECT_EQ(e.event(), 5u) << at;
        }
      }
    }
  for (bool single : {true, false}) {
    process p("kinds");
    p.add<third_fails>({"streamed"}, std::make_shared<std::atomic<int>>(0));
    p.add_path("p", {"streamed"});
    try {
      (single ? run_single_threaded : run_threaded)(p, fw_test::options(10, 4));
      EXPECT_TRUE(single) << "the third stream's begin_job threw, yet the run went on";
    } catch (const module_error& e) {
      EXPECT_FALSE(single) << "the reference has one stream";
      EXPECT_EQ(e.label(), "streamed");
      EXPECT_NE(std::string(e.what()).find("begin_job: stream 2 cannot start"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
