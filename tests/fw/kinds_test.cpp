// The module kinds and what each promises: stream:: modules get an instance per stream, each called
// for one event at a time; one:: modules never run beside themselves, nor beside the modules that
// share a resource with them, and freely beside the others; ExternalWork in every kind, both
// forms, both processors; an exception in any transition or event method ends the job naming the
// module; and a random process of typed modules of every kind gives the reference's checksum.
#include <gtest/gtest.h>

#include <heddle/async/timer.hpp>
#include <heddle/fw.hpp>
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
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
  // How many times one of `a`'s intervals overlaps another of the same list or of `b`'s.
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
  explicit per_stream(stream_census* c) : c_(c), out_(produces<std::vector<std::int64_t>>()) { c->instances.fetch_add(1); }
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
  for (kind_form k : {kind_form::global_handle, kind_form::global_future, kind_form::stream_handle, kind_form::stream_future,
                      kind_form::one_handle, kind_form::one_future})
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
  void end_run(const run& r, const event_setup&) override {
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
          EXPECT_NE(what.find(std::string(name(s)) + ": boom"), std::string::npos) << at << ": " << what;  // the transition
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

// --- a random process of typed modules of every kind: the reference's checksum.

// The products' types, and a user type with its own digest.
struct cluster {
  std::vector<int> cells;
  double energy = 0;
};
std::uint64_t heddle_fw_digest(const cluster& c) noexcept {
  return product_digest(c.cells) * 3 + product_digest(c.energy);
}

enum ptype : int { t_int, t_vector, t_string, t_cluster, num_types };

// Folds a product into a hash, and makes one from a hash.
template <class T>
std::uint64_t fold(std::uint64_t h, const T& v) noexcept {
  return detail::digest_mix(h ^ product_digest(v));
}
void make_product(event& e, ptype t, std::uint64_t h, const put_token<std::int64_t>& i, const put_token<std::vector<double>>& v,
                  const put_token<std::string>& s, const put_token<cluster>& c) {
  switch (t) {
    case t_int: e.put(i, std::int64_t(h >> 1)); break;
    case t_vector: {
      std::vector<double>& out = e.emplace(v);
      for (std::uint64_t k = 0; k < 1 + h % 6; ++k) out.push_back(double((h >> (k * 4)) & 0xfff) * 0.125);
      break;
    }
    case t_string: e.emplace(s, std::to_string(h)); break;
    default: e.emplace(c, cluster{{int(h & 0xff), int((h >> 8) & 0xff)}, double(h % 1000) / 7}); break;
  }
}

struct input {
  std::string label;
  ptype type;
};

struct random_spec {
  std::string label;
  int kind;  // 0 global, 1 stream, 2 one
  bool external;
  std::vector<std::string> resources;  // one::
  ptype type;                          // of its product
  std::vector<input> inputs;
};

// What every random module does, whatever its kind: reads its inputs into a hash and puts a product
// of its type made from it (and from the event number).
struct random_body {
  std::vector<std::pair<ptype, std::uint32_t>> reads;  // (type, token index among that type's)
  std::vector<get_token<std::int64_t>> ints;
  std::vector<get_token<std::vector<double>>> vectors;
  std::vector<get_token<std::string>> strings;
  std::vector<get_token<cluster>> clusters;
  put_token<std::int64_t> i;
  put_token<std::vector<double>> v;
  put_token<std::string> s;
  put_token<cluster> c;
  ptype type = t_int;
  std::uint64_t salt = 0;

  void run(event& e) const {
    std::uint64_t h = salt ^ e.id().event;
    for (auto [t, k] : reads) {
      switch (t) {
        case t_int: h = fold(h, e.get(ints[k])); break;
        case t_vector: h = fold(h, e.get(vectors[k])); break;
        case t_string: h = fold(h, e.get(strings[k])); break;
        default: h = fold(h, e.get(clusters[k])); break;
      }
    }
    make_product(e, type, h, i, v, s, c);
  }
};

// Declares the spec's inputs and product through module M's consumes / produces.
#define FW_TEST_RANDOM_DECLARE(spec)                                                                                      \
  b_.type = (spec).type;                                                                                                 \
  b_.salt = std::hash<std::string>()((spec).label);                                                                      \
  for (const input& in : (spec).inputs) {                                                                                \
    switch (in.type) {                                                                                                   \
      case t_int: b_.reads.push_back({t_int, std::uint32_t(b_.ints.size())}), b_.ints.push_back(this->template consumes<std::int64_t>(in.label)); break; \
      case t_vector: b_.reads.push_back({t_vector, std::uint32_t(b_.vectors.size())}), b_.vectors.push_back(this->template consumes<std::vector<double>>(in.label)); break; \
      case t_string: b_.reads.push_back({t_string, std::uint32_t(b_.strings.size())}), b_.strings.push_back(this->template consumes<std::string>(in.label)); break; \
      default: b_.reads.push_back({t_cluster, std::uint32_t(b_.clusters.size())}), b_.clusters.push_back(this->template consumes<cluster>(in.label)); break; \
    }                                                                                                                    \
  }                                                                                                                      \
  switch ((spec).type) {                                                                                                 \
    case t_int: b_.i = this->template produces<std::int64_t>(); break;                                                   \
    case t_vector: b_.v = this->template produces<std::vector<double>>(); break;                                         \
    case t_string: b_.s = this->template produces<std::string>(); break;                                                 \
    default: b_.c = this->template produces<cluster>(); break;                                                           \
  }

// ExternalWork modules wait on a timer for odd events and go on at once for even ones.
inline void random_acquire(const event& e, async_handle& h) {
  if (e.id().event % 2) h.after(heddle::sleep_for(std::chrono::microseconds(20 + e.id().event % 30)));
  else h.done();
}

template <class... A>
class random_global final : public global::EDProducer<A...> {
 public:
  explicit random_global(const random_spec& spec) { FW_TEST_RANDOM_DECLARE(spec) }
  void acquire(const event& e, const event_setup&, async_handle h) const override { random_acquire(e, h); }
  void produce(event& e, const event_setup&) const override { b_.run(e); }

 private:
  random_body b_;
};

template <class Base>
class random_mutable final : public Base {
 public:
  explicit random_mutable(const random_spec& spec) {
    FW_TEST_RANDOM_DECLARE(spec)
    if constexpr (std::is_same_v<Base, one::EDProducer<>> || std::is_same_v<Base, one::EDProducer<ExternalWork>>)
      for (const std::string& r : spec.resources) r.empty() ? this->uses_resource() : this->uses_resource(r);
  }
  void acquire(const event& e, const event_setup&, async_handle h) override { random_acquire(e, h); }
  void produce(event& e, const event_setup&) override {
    ++events_;  // state across events: one event at a time per instance
    b_.run(e);
  }

 private:
  random_body b_;
  std::uint64_t events_ = 0;
};
#undef FW_TEST_RANDOM_DECLARE

std::unique_ptr<module_base> make_random(const random_spec& s) {
  switch (s.kind * 2 + (s.external ? 1 : 0)) {
    case 0: return std::make_unique<random_global<>>(s);
    case 1: return std::make_unique<random_global<ExternalWork>>(s);
    case 2: return std::make_unique<random_mutable<stream::EDProducer<>>>(s);
    case 3: return std::make_unique<random_mutable<stream::EDProducer<ExternalWork>>>(s);
    case 4: return std::make_unique<random_mutable<one::EDProducer<>>>(s);
    default: return std::make_unique<random_mutable<one::EDProducer<ExternalWork>>>(s);
  }
}

// A filter on a product of any type: passes where its hash says so (about two events in three).
class random_filter final : public global::EDFilter<> {
 public:
  explicit random_filter(const random_spec& spec) : inputs_(spec.inputs) {
    for (const input& in : spec.inputs) {
      switch (in.type) {
        case t_int: ints_.push_back(consumes<std::int64_t>(in.label)); break;
        case t_vector: vectors_.push_back(consumes<std::vector<double>>(in.label)); break;
        case t_string: strings_.push_back(consumes<std::string>(in.label)); break;
        default: clusters_.push_back(consumes<cluster>(in.label)); break;
      }
    }
  }
  bool filter(event& e, const event_setup&) const override {
    std::uint64_t h = e.id().event;
    std::size_t i = 0, v = 0, s = 0, c = 0;
    for (const input& in : inputs_) {
      switch (in.type) {
        case t_int: h = fold(h, e.get(ints_[i++])); break;
        case t_vector: h = fold(h, e.get(vectors_[v++])); break;
        case t_string: h = fold(h, e.get(strings_[s++])); break;
        default: h = fold(h, e.get(clusters_[c++])); break;
      }
    }
    return h % 3 != 0;
  }

 private:
  std::vector<input> inputs_;  // in the order of their tokens within each type
  std::vector<get_token<std::int64_t>> ints_;
  std::vector<get_token<std::vector<double>>> vectors_;
  std::vector<get_token<std::string>> strings_;
  std::vector<get_token<cluster>> clusters_;
};

// Output modules read what they write; the written count is checked against the reference's.
class random_output final : public one::OutputModule<> {
 public:
  random_output(const random_spec& spec, std::atomic<long>* written) : written_(written) {
    for (const input& in : spec.inputs) tokens_.push_back(consumes<std::string>(in.label));
    uses_resource("output file");
  }
  void write(const event& e) override {
    for (const auto& t : tokens_) (void)e.get(t);
    written_->fetch_add(1);
  }

 private:
  std::atomic<long>* written_;
  std::vector<get_token<std::string>> tokens_;
};

struct random_process {
  std::vector<random_spec> producers, filters;
  std::vector<std::vector<std::string>> paths;
  random_spec output;  // reads strings only (random_output)
  std::vector<std::string> output_paths;

  process make(std::atomic<long>* written) const {
    process p("random");
    for (const random_spec& s : producers) p.add_module({s.label, "random"}, [s] { return make_random(s); });
    for (const random_spec& s : filters) p.add<random_filter>({s.label}, s);
    p.add<random_output>({.label = output.label, .select_paths = output_paths}, output, written);
    for (std::size_t k = 0; k < paths.size(); ++k) p.add_path("path" + std::to_string(k), paths[k]);
    p.add_end_path("end", {output.label});
    return p;
  }
};

random_process random_graph(std::mt19937& rng, int n) {
  auto pick = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng); };
  const std::vector<std::vector<std::string>> resource_sets = {{}, {"r0"}, {"r1"}, {"r0", "r1"}, {""}};
  random_process g;
  for (int i = 0; i < n; ++i) {
    random_spec s;
    s.label = "m" + std::to_string(i);
    s.kind = pick(3);
    s.external = pick(4) == 0;
    if (s.kind == 2) s.resources = resource_sets[std::size_t(pick(5))];
    s.type = ptype(pick(num_types));
    for (int k = 0, m = i ? pick(4) : 0; k < m; ++k) {
      const random_spec& from = g.producers[std::size_t(pick(i))];
      s.inputs.push_back({from.label, from.type});
    }
    g.producers.push_back(std::move(s));
  }
  for (int f = 0; f < 5; ++f) {
    random_spec s;
    s.label = "f" + std::to_string(f);
    for (int k = 0, m = 1 + pick(2); k < m; ++k) {
      const random_spec& from = g.producers[std::size_t(pick(n))];
      s.inputs.push_back({from.label, from.type});
    }
    g.filters.push_back(std::move(s));
  }
  // Paths of filters, with a producer among them (it passes) now and then.
  g.paths = {{"f0", "f1"}, {"f2", g.producers[std::size_t(pick(n))].label, "f3"}, {"f4", "f1"}};
  g.output.label = "out";
  for (const random_spec& s : g.producers)
    if (s.type == t_string && pick(2)) g.output.inputs.push_back({s.label, t_string});
  g.output_paths = {"path" + std::to_string(pick(3))};
  return g;
}

TEST(RandomKinds, ThreadedChecksumEqualsTheReference) {
  heddle_test::watchdog dog("random kinds", std::chrono::seconds(600));
  std::mt19937 rng(20261126);
  const int graphs = heddle_test::scaled(6, 3);
  const std::uint64_t events = 40;
  for (int gi = 0; gi < graphs; ++gi) {
    const random_process g = random_graph(rng, 10 + 4 * gi);
    std::atomic<long> written_reference{0};
    process ref = g.make(&written_reference);
    run_options ro = fw_test::options(events, 1, 1);
    ro.events_per_run = 7;
    const run_report reference = run_single_threaded(ref, ro);
    EXPECT_EQ(reference.events, events);
    for (unsigned workers : {1u, 2u, 4u})
      for (std::uint64_t in_flight : {1u, 3u, 16u}) {
        std::atomic<long> written{0};
        process p = g.make(&written);
        run_options o = fw_test::options(events, in_flight, workers);
        o.events_per_run = 7;
        const run_report r = run_threaded(p, o);
        const std::string at = "graph " + std::to_string(gi) + ", workers " + std::to_string(workers) + ", in flight " +
                               std::to_string(in_flight);
        EXPECT_EQ(r.events, events) << at;
        EXPECT_EQ(r.runs.size(), 6u) << at;
        EXPECT_EQ(r.checksum, reference.checksum) << at;
        EXPECT_EQ(written.load(), written_reference.load()) << at;
      }
  }
}

}  // namespace
