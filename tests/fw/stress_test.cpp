// SPDX-License-Identifier: Apache-2.0
// Random processes, many events in flight: the threaded processor's checksum equals the reference's
// for every graph, every mix of thread types and waits, with runs and rejecting filters; from
// configurations (built-in modules of std::int64_t products) and from typed C++ modules of every
// kind (global, stream, one:: on shared resources; ExternalWork; products of four types).
#include <gtest/gtest.h>
#include <reproduce.hpp>

#include <atomic>
#include <functional>
#include <heddle/async/timer.hpp>
#include <heddle/fw.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fw_test_support.hpp"
#include "study/study.hpp"

namespace stress_test {
namespace {

using namespace heddle::fw;
namespace fw_detail = heddle::fw_detail;
using namespace heddle::fw::study;  // the timing modules the configurations use

// A random configuration: `n` producers in a DAG (each gets up to 4 earlier ones), filters with
// decision patterns, output modules selecting paths.
std::string random_config(std::mt19937& rng, int n) {
  auto pick = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng); };
  const char* threads[] = {"ThreadSafeBetweenInstances", "ThreadSafeBetweenInstances", "ThreadSafeBetweenModules",
                           "ThreadUnsafe"};
  const char* timed[] = {"EventTimesBusyWaitProducer", "EventTimesSleepingProducer"};
  std::ostringstream s;
  s << R"({"process":{"options":{"nSimultaneousEvents":4,"busyWaitScaleFactor":2e7},"source":{"iterations":40,"eventsPerRun":7},"producers":[)";
  for (int i = 0; i < n; ++i) {
    s << (i ? "," : "") << R"({"@label":"p)" << i << R"(","threadType":")" << threads[pick(4)] << '"';
    switch (pick(4)) {
      case 0: s << R"(,"@type":"FastProducer")"; break;
      case 1: s << R"(,"@type":"ThreadSafeProducer","value":)" << pick(1000); break;
      case 2: s << R"(,"@type":"SleepingWithAcquireProducer","averageTime":2e-5,"minTime":0,"maxTime":4e-5)"; break;
      default: s << R"(,"@type":")" << timed[pick(2)] << R"(","eventTimes":[1e-5,0,3e-5])"; break;
    }
    s << R"(,"toGet":[)";
    for (int k = 0, m = i ? pick(5) : 0; k < m; ++k)
      s << (k ? "," : "") << R"({"label":"p)" << pick(i) << R"(","product":""})";
    s << "]}";
  }
  s << R"(],"filters":[)";
  for (int f = 0; f < 6; ++f) {
    s << (f ? "," : "") << R"({"@label":"f)" << f << R"(","@type":"PassFilter","threadType":")" << threads[pick(4)]
      << R"(","pass":[true,)" << (pick(2) ? "false" : "true") << R"(,true],"toGet":[{"label":"p)" << pick(n)
      << R"(","product":""}]})";
  }
  s << R"(],"outputs":[{"@label":"out","@type":"OutputModule","threadType":"ThreadUnsafe","selectEvents":["a"],"toGet":[{"label":"p)"
    << pick(n) << R"(","product":""}]},{"@label":"all","@type":"OutputModule","toGet":[{"label":"p)" << pick(n)
    << R"(","product":""}]}],)";
  s << R"("paths":{"a":["f0","f1","f2"],"b":["f3","f1"],"c":["f4","f5"]},"endPaths":{"e":["out","all"]}}})";
  return s.str();
}

TEST(FrameworkStress, RandomProcessesGiveTheReferenceChecksum) {
  heddle_test::watchdog dog("framework stress", std::chrono::seconds(600));
  std::mt19937 rng(static_cast<std::mt19937::result_type>(heddle_test::seed("random_configs", 20261123)));
  const int graphs = heddle_test::scaled(12, 4);
  for (int g = 0; g < graphs; ++g) {
    const std::string text = random_config(rng, 12 + g * 4);
    const process_config c = parse_config(text, "random-" + std::to_string(g));
    std::uint64_t reference = 0;
    {
      process p = make_process(study::with_timing(c, {wait_mode::as_configured, 1, 0}));
      run_options o = fw_test::options(c.events, 1);
      o.events_per_run = c.events_per_run;
      reference = run_single_threaded(p, o).checksum;
    }
    for (wait_mode wait : {wait_mode::as_configured, wait_mode::timer, wait_mode::busy})
      for (std::uint64_t in_flight : {1u, 3u, 40u}) {
        process p = make_process(study::with_timing(c, {wait, 1, 0}));
        run_options o = fw_test::options(c.events, in_flight, 1 + unsigned(g % 3));
        o.events_per_run = c.events_per_run;
        const run_report r = run_threaded(p, o);
        EXPECT_EQ(r.events, c.events);
        EXPECT_EQ(r.runs.size(), 6u);
        EXPECT_EQ(r.checksum, reference) << "graph " << g << ", wait " << to_string(wait) << ", in flight "
                                         << in_flight;
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
  return fw_detail::digest_mix(h ^ product_digest(v));
}
void make_product(event& e, ptype t, std::uint64_t h, const put_token<std::int64_t>& i,
                  const put_token<std::vector<double>>& v, const put_token<std::string>& s,
                  const put_token<cluster>& c) {
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
// Formatted by hand: a table, one row a line.
// clang-format off
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
// clang-format on

// ExternalWork modules wait on a timer for odd events and go on at once for even ones.
inline void random_acquire(const event& e, async_handle& h) {
  if (e.id().event % 2) h.after(heddle::sleep_for(std::chrono::microseconds(20 + e.id().event % 30)));
  else h.done();
}

template <class... A>
class random_global : public global::EDProducer<A...> {
 public:
  explicit random_global(const random_spec& spec) { FW_TEST_RANDOM_DECLARE(spec) }
  void produce(event& e, const event_setup&) const override { b_.run(e); }

 private:
  random_body b_;
};

template <class Base>
class random_mutable : public Base {
 public:
  explicit random_mutable(const random_spec& spec) {
    FW_TEST_RANDOM_DECLARE(spec)
    if constexpr (std::is_same_v<Base, one::EDProducer<>> || std::is_same_v<Base, one::EDProducer<ExternalWork>>)
      for (const std::string& r : spec.resources) r.empty() ? this->uses_resource() : this->uses_resource(r);
  }
  void produce(event& e, const event_setup&) override {
    ++events_;  // state across events: one event at a time per instance
    b_.run(e);
  }

 private:
  random_body b_;
  std::uint64_t events_ = 0;
};
#undef FW_TEST_RANDOM_DECLARE

// The ExternalWork ones: only a module that lists the ability has an acquire to override.
class random_global_external final : public random_global<ExternalWork> {
 public:
  using random_global::random_global;
  void acquire(const event& e, const event_setup&, async_handle h) const override { random_acquire(e, h); }
};

template <class Base>
class random_mutable_external final : public random_mutable<Base> {
 public:
  using random_mutable<Base>::random_mutable;
  void acquire(const event& e, const event_setup&, async_handle h) override { random_acquire(e, h); }
};

std::unique_ptr<module_base> make_random(const random_spec& s) {
  switch (s.kind * 2 + (s.external ? 1 : 0)) {
    case 0: return std::make_unique<random_global<>>(s);
    case 1: return std::make_unique<random_global_external>(s);
    case 2: return std::make_unique<random_mutable<stream::EDProducer<>>>(s);
    case 3: return std::make_unique<random_mutable_external<stream::EDProducer<ExternalWork>>>(s);
    case 4: return std::make_unique<random_mutable<one::EDProducer<>>>(s);
    default: return std::make_unique<random_mutable_external<one::EDProducer<ExternalWork>>>(s);
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

TEST(FrameworkStress, RandomTypedModulesOfEveryKindGiveTheReferenceChecksum) {
  heddle_test::watchdog dog("random kinds", std::chrono::seconds(600));
  std::mt19937 rng(static_cast<std::mt19937::result_type>(heddle_test::seed("random_graphs", 20261126)));
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

}  // namespace stress_test
