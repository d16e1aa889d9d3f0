// SPDX-License-Identifier: Apache-2.0
// Registered module types in configurations: HEDDLE_FW_MODULE in the program, parameters from the
// entry's keys (unknown ones refused), roles checked against the lists, condition producers under
// esProducers with a JsonConditionsSource, and the checksum both processors agree on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <heddle/fw.hpp>
#include <numeric>
#include <string>
#include <vector>

namespace fw = heddle::fw;

namespace regtest {

struct ScaleRecord {};
struct Scale {
  double factor;
};

// A random walk of `steps` steps per event, seeded from the event number.
class Walker : public fw::global::EDProducer<> {
 public:
  explicit Walker(const fw::parameter_set& ps)
      : steps_(ps.get<unsigned>("steps")), seed_(ps.get<long long>("seed", 7)), out_(produces<std::vector<double>>()) {}
  void produce(fw::event& e, const fw::event_setup&) const override {
    std::vector<double> walk(steps_);
    std::uint64_t x = static_cast<std::uint64_t>(seed_) ^ (e.id().event * 0x9e3779b97f4a7c15ull);
    double at = 0;
    for (double& v : walk) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      at += double(x % 1000) / 1000.0 - 0.5;
      v = at;
    }
    e.emplace(out_, std::move(walk));
  }

 private:
  unsigned steps_;
  long long seed_;
  fw::put_token<std::vector<double>> out_;
};

// Passes events whose walk ends above `threshold` after scaling by the conditions.
class EndsHigh : public fw::global::EDFilter<> {
 public:
  explicit EndsHigh(const fw::parameter_set& ps)
      : walk_(consumes<std::vector<double>>(ps.get<fw::input_tag>("src"))), threshold_(ps.get<double>("threshold")) {}
  bool filter(fw::event& e, const fw::event_setup& s) const override {
    const std::vector<double>& w = e.get(walk_);
    return !w.empty() && w.back() * s.get(scale_).factor > threshold_;
  }

 private:
  fw::get_token<std::vector<double>> walk_;
  fw::es_token<Scale, ScaleRecord> scale_ = es_consumes<Scale, ScaleRecord>();
  double threshold_;
};

class ScaleProducer : public fw::es_producer {
 public:
  explicit ScaleProducer(const fw::parameter_set&) : token_(es_produces<Scale, ScaleRecord>()) {}
  void produce(fw::es_context& c) const override { c.emplace(token_, Scale{c.payload().get<double>("factor")}); }

 private:
  fw::es_put_token<Scale, ScaleRecord> token_;
};

// What a module constructible with its context (registry.hpp, module_context) was told, as the
// last one made saw it.
struct seen_context {
  fw::module_role listed = fw::module_role::output;
  double busy_wait_scale = 0;
  std::string named;
};
seen_context last_context;

class ContextReader : public fw::global::EDAnalyzer<> {
 public:
  ContextReader(const fw::parameter_set&, const fw::module_context& c) {
    last_context = {c.listed, c.options.get<double>("busyWaitScaleFactor", 0.0), c.named};
  }
  void analyze(const fw::event&, const fw::event_setup&) const override {}
};

}  // namespace regtest

// Registered under their qualified names, as configurations write them.
HEDDLE_FW_MODULE(regtest::ContextReader);
HEDDLE_FW_MODULE(regtest::Walker);
HEDDLE_FW_MODULE(regtest::EndsHigh);
HEDDLE_FW_MODULE(regtest::ScaleProducer);

namespace {

struct files {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("heddle_registered_test_" + std::to_string(::getpid()));
  files() { std::filesystem::create_directories(dir); }
  ~files() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

const char* const conditions_json = R"({"records": {"regtest::ScaleRecord": [
  {"firstRun": 1, "payload": {"factor": 1.0}}, {"firstRun": 2, "payload": {"factor": -1.0}}]}})";

std::string config(const std::string& walker_extra = "", const std::string& filter_list = "filters") {
  return R"({"process": {"options": {"nSimultaneousEvents": 4, "busyWaitScaleFactor": 1e7},
    "source": {"iterations": 60, "eventsPerRun": 30},
    "producers": [{"@label": "walk", "@type": "regtest::Walker", "steps": 50)" +
         walker_extra + R"(}],
    ")" + filter_list +
         R"(": [{"@label": "high", "@type": "regtest::EndsHigh", "src": "walk", "threshold": 0.5}],
    "esProducers": [{"@label": "scale", "@type": "regtest::ScaleProducer"}],
    "esSources": [{"@type": "JsonConditionsSource", "file": "conditions.json"}],
    "paths": {"p": ["high"]}}})";
}

std::string error_of(const std::string& path) {
  try {
    fw::process p = fw::make_process(fw::load_config(path));
    p.finalize();
  } catch (const fw::config_error& x) {
    return x.what();
  }
  return "no error";
}

}  // namespace

TEST(Registered, RunsFromAConfigurationWithConditions) {
  files f;
  f.write("conditions.json", conditions_json);
  const std::string path = f.write("job.json", config());
  const fw::process_config c = fw::load_config(path);
  fw::process a = fw::make_process(c), b = fw::make_process(c);
  fw::run_options o;
  o.events = 60;
  o.events_per_run = 30;
  o.threads = 2;
  o.events_in_flight = 4;
  const fw::run_report threaded = fw::run_threaded(a, o);
  o.events_in_flight = 1;
  const fw::run_report single = fw::run_single_threaded(b, o);
  EXPECT_EQ(threaded.events, 60u);
  EXPECT_EQ(threaded.checksum, single.checksum);
  ASSERT_EQ(threaded.runs.size(), 2u);
  EXPECT_NE(threaded.runs[0].checksum, threaded.runs[1].checksum);  // the scale's sign flips at run 2
}

TEST(Registered, UnknownParameterNamesModuleAndKey) {
  files f;
  f.write("conditions.json", conditions_json);
  EXPECT_EQ(error_of(f.write("job.json", config(R"(, "stpes": 3)"))),
            f.dir.string() +
                "/job.json: process.producers[0] 'walk': unknown parameter 'stpes' (type regtest::Walker does not "
                "read it)");
}

TEST(Registered, MistypedParameterNamesIt) {
  files f;
  f.write("conditions.json", conditions_json);
  const std::string e = error_of(f.write("job.json", config(R"(, "seed": "x")")));
  EXPECT_NE(e.find("process.producers[0] 'walk'"), std::string::npos) << e;
  EXPECT_NE(e.find("parameter 'seed'"), std::string::npos) << e;
}

TEST(Registered, TypeOfAnotherRoleIsRefused) {
  files f;
  f.write("conditions.json", conditions_json);
  EXPECT_EQ(error_of(f.write("job.json", config("", "producers_x"))).find("unknown key 'producers_x'") !=
                std::string::npos,
            true);
  const std::string text = R"({"process": {"options": {"nSimultaneousEvents": 1, "busyWaitScaleFactor": 1e7},
    "source": {"iterations": 1}, "filters": [{"@label": "walk", "@type": "regtest::Walker", "steps": 1}], "paths": {}}})";
  EXPECT_EQ(error_of(f.write("role.json", text)),
            f.dir.string() +
                "/role.json: process.filters[0] 'walk': type regtest::Walker is a producer, listed among the filters");
}

TEST(Registered, AModuleThatAsksIsToldItsListAndTheProcessOptions) {
  files f;
  const std::string text = R"({"process": {"options": {"nSimultaneousEvents": 1, "busyWaitScaleFactor": 2.5e6},
    "source": {"iterations": 1}, "analyzers": [{"@label": "ctx", "@type": "regtest::ContextReader"}], "paths": {}}})";
  const std::string path = f.write("context.json", text);
  regtest::last_context = {};
  fw::process p = fw::make_process(fw::load_config(path));
  EXPECT_EQ(regtest::last_context.listed, fw::module_role::analyzer);
  EXPECT_DOUBLE_EQ(regtest::last_context.busy_wait_scale, 2.5e6);
  EXPECT_EQ(regtest::last_context.named, path + ": process.analyzers[0] 'ctx'");
  const std::string wrong = R"({"process": {"options": {"nSimultaneousEvents": 1},
    "source": {"iterations": 1}, "outputs": [{"@label": "ctx", "@type": "regtest::ContextReader"}], "paths": {}}})";
  EXPECT_EQ(error_of(f.write("listed.json", wrong)),
            f.dir.string() + "/listed.json: process.outputs[0] 'ctx': type regtest::ContextReader is an analyzer, "
                             "listed among the output modules");
  EXPECT_EQ(regtest::last_context.listed, fw::module_role::output);
  EXPECT_DOUBLE_EQ(regtest::last_context.busy_wait_scale, 0.0);  // not in this file's options
}

TEST(Registered, UnknownTypeSaysWhereItLooked) {
  files f;
  const std::string text = R"({"process": {"options": {"nSimultaneousEvents": 1, "busyWaitScaleFactor": 1e7},
    "source": {"iterations": 1}, "producers": [{"@label": "x", "@type": "regtest::Nothing"}], "paths": {}}})";
  const std::string e = error_of(f.write("unknown.json", text));
  EXPECT_NE(e.find("process.producers[0] 'x': unknown module type 'regtest::Nothing'"), std::string::npos) << e;
  fw::plugin_loader plugins({f.dir.string()}, false);
  try {
    fw::make_process(fw::load_config(f.dir.string() + "/unknown.json"), &plugins);
    ADD_FAILURE() << "no error";
  } catch (const fw::config_error& x) {
    EXPECT_NE(std::string(x.what()).find("searched the program, " + f.dir.string()), std::string::npos) << x.what();
  }
}

TEST(Registered, ConditionsFileErrorsNameIt) {
  files f;
  f.write("conditions.json", R"({"records": {"regtest::ScaleRecord": [{"firstRun": 0}]}})");
  EXPECT_EQ(error_of(f.write("job.json", config())),
            f.dir.string() +
                "/conditions.json: records.regtest::ScaleRecord[0].firstRun: expected a run or lumi number (1 to "
                "4294967295), found 0");
}

TEST(Registered, TheRegistryListsTheTypes) {
  const std::vector<std::string> names = fw::registered_module_names();
  for (const char* n : {"regtest::EndsHigh", "regtest::ScaleProducer", "regtest::Walker"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  const auto es = fw::find_registered_module("regtest::ScaleProducer");
  ASSERT_TRUE(es);
  EXPECT_TRUE(es->make_es && !es->make);
}
