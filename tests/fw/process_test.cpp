// SPDX-License-Identifier: Apache-2.0
// Checking a process as a whole: labels, products (label, instance and type), roles, cycles, paths
// and end paths.
#include <gtest/gtest.h>

#include "graph.hpp"  // src/fw
#include <heddle/fw.hpp>

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;
namespace fw_detail = heddle::fw_detail;
using fw_test::add_probe;
using fw_test::decl;
using fw_test::finalize_error;
using fw_test::inputs;

std::string config_error_of(const std::string& producers, const std::string& filters, const std::string& paths) {
  const std::string text =
      R"({"process":{"options":{"nSimultaneousEvents":1,"busyWaitScaleFactor":1},"source":{"iterations":1},"producers":[)" +
      producers + R"(],"filters":[)" + filters + R"(],"paths":)" + paths + "}}";
  try {
    process p = make_process(parse_config(text, "t.json"));
    p.finalize();
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

TEST(Process, TheRealConfigurationsFinalize) {
  FW_TEST_NEEDS_CMS(fw_test::hipileup);
  FW_TEST_NEEDS_CMS(fw_test::minbias);
  for (const char* name : {fw_test::hipileup, fw_test::minbias}) {
    process p = make_process(load_config(fw_test::cms(name)));
    ASSERT_NO_THROW(p.finalize()) << name;
    const fw_detail::graph& g = fw_detail::graph_of(p);
    std::size_t edges = 0;
    for (const auto& n : g.nodes) edges += n.producers.size();
    EXPECT_EQ(g.num_edges, edges + g.num_steps()) << name;
  }
}

TEST(ProcessErrors, UnknownLabelInToGetAndInAPath) {
  const std::string t =
      config_error_of(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"ghost","product":""}]})",
                      R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(t.find("t.json: process.producers[0] 'a': consumes long 'ghost': unknown label 'ghost'"), std::string::npos)
      << t;
  const std::string p = config_error_of(R"({"@label":"a","@type":"FastProducer"})",
                                        R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f","nowhere"]})");
  EXPECT_NE(p.find("path 'p'[1]: unknown label 'nowhere'"), std::string::npos) << p;
}

TEST(ProcessErrors, ACycleIsPrinted) {
  const std::string e = config_error_of(
      R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"b","product":""}]},
         {"@label":"b","@type":"FastProducer","toGet":[{"label":"c","product":""}]},
         {"@label":"c","@type":"FastProducer","toGet":[{"label":"a","product":""}]})",
      R"({"@label":"f","@type":"PassFilter","toGet":[{"label":"a","product":""}]})", R"({"p":["f"]})");
  EXPECT_NE(e.find("dependency cycle: 'a' -> 'b' -> 'c' -> 'a'"), std::string::npos) << e;
  const std::string self =
      config_error_of(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"a","product":""}]})",
                      R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(self.find("dependency cycle: 'a' -> 'a'"), std::string::npos) << self;
}

// A built-in filter makes no product: reading one from it names both modules and what it lacks.
TEST(ProcessErrors, AFilterAskedForAsAProduct) {
  const std::string e = config_error_of(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"f","product":""}]})",
                                        R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(e.find("process.producers[0] 'a': consumes long 'f': process.filters[0] 'f' makes no long 'f' (it makes no "
                   "products)"),
            std::string::npos)
      << e;
}

// Paths hold producers, filters and analyzers (the ones that are not filters always pass); end
// paths hold output modules and analyzers.
TEST(ProcessErrors, WhatBelongsOnPathsAndEndPaths) {
  process p("hand");
  add_probe(p, decl("made"), [](const inputs&) { return 1; });
  add_probe(p, decl("o", module_role::output), [](const inputs&) { return 1; });
  p.add_path("p", {"made", "o"});
  p.add_end_path("e", {"o"});
  EXPECT_NE(finalize_error(p).find("hand: path 'p'[1]: 'o' is an output module: it belongs on an end path"),
            std::string::npos)
      << finalize_error(p);

  process q("hand");
  add_probe(q, decl("made"), [](const inputs&) { return 1; });
  q.add_end_path("e", {"made"});
  EXPECT_NE(
      finalize_error(q).find("end path 'e'[0]: 'made' is a producer: an end path holds output modules and analyzers"),
      std::string::npos)
      << finalize_error(q);
}

TEST(Process, AProducerOrAnAnalyzerOnAPathRunsAndPasses) {
  for (bool single : {true, false}) {
    process p("hand");
    auto* made = add_probe(p, decl("made"), [](const inputs& in) { return std::int64_t(in.number()); });
    std::atomic<long> wrong{0};
    auto* seen = add_probe(p, decl("seen", module_role::analyzer, {"made"}), [&](const inputs& in) {
      if (in[0] != std::int64_t(in.number())) wrong.fetch_add(1);
      return 0;  // an analyzer's result decides nothing
    });
    auto* after = add_probe(p, decl("after", module_role::filter), [](const inputs&) { return 1; });
    auto* out = add_probe(p, decl("out", module_role::output, {"made"}), [](const inputs&) { return 1; });
    p.add_path("p", {"made", "seen", "after"});
    p.add_end_path("e", {"out"});
    fw_test::probe_decl od = decl("out2", module_role::output);
    od.select_paths = {"p"};
    auto* selected = add_probe(p, od, [](const inputs&) { return 1; });
    p.add_end_path("e2", {"out2"});
    const run_report r = (single ? run_single_threaded : run_threaded)(p, fw_test::options(20, 4));
    EXPECT_EQ(r.events, 20u);
    EXPECT_EQ(made->calls.load(), 20);
    EXPECT_EQ(seen->calls.load(), 20);
    EXPECT_EQ(after->calls.load(), 20);  // neither the producer nor the analyzer stopped the path
    EXPECT_EQ(out->calls.load(), 20);
    EXPECT_EQ(selected->calls.load(), 20);  // the path passed every event
    EXPECT_EQ(wrong.load(), 0);
  }
}

TEST(ProcessErrors, DuplicateLabelsAndProductInstances) {
  const std::string d =
      config_error_of(R"({"@label":"a","@type":"FastProducer"},{"@label":"a","@type":"FastProducer"})",
                      R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(d.find("process.producers[1] 'a': label already used by process.producers[0]"), std::string::npos) << d;
  const std::string i = config_error_of(
      R"({"@label":"a","@type":"FastProducer"})",
      R"({"@label":"f","@type":"PassFilter","toGet":[{"label":"a","product":"tracks"}]})", R"({"p":["f"]})");
  EXPECT_NE(
      i.find("process.filters[0] 'f': consumes long 'a:tracks': process.producers[0] 'a' makes no long 'a:tracks' "
             "(it makes long 'a')"),
      std::string::npos)
      << i;
}

TEST(ProcessErrors, OutputModulesBelongOnEndPaths) {
  process p("hand");
  add_probe(p, decl("f", module_role::filter), [](const inputs&) { return 1; });
  add_probe(p, decl("o", module_role::output), [](const inputs&) { return 1; });
  p.add_path("p", {"f"});
  EXPECT_NE(finalize_error(p).find("output module on no end path"), std::string::npos) << finalize_error(p);

  process q("hand");
  add_probe(q, decl("f", module_role::filter), [](const inputs&) { return 1; });
  add_probe(q, decl("o", module_role::output), [](const inputs&) { return 1; });
  q.add_path("p", {"f"});
  q.add_end_path("e", {"f"});
  EXPECT_NE(finalize_error(q).find("end path 'e'[0]: 'f' is a filter: an end path holds output modules and analyzers"),
            std::string::npos)
      << finalize_error(q);

  process r("hand");
  fw_test::probe_decl o = decl("o", module_role::output);
  o.select_paths = {"nope"};
  add_probe(r, o, [](const inputs&) { return 1; });
  r.add_end_path("e", {"o"});
  EXPECT_NE(finalize_error(r).find("selectEvents: unknown path 'nope'"), std::string::npos) << finalize_error(r);
}

// Declarations are for the constructor: once the module is in a process they are refused.
TEST(ProcessErrors, DeclaringAfterTheConstructorIsALogicError) {
  struct late final : global::EDProducer<> {
    void produce(event&, const event_setup&) const override {}
    void declare_now() { (void)produces<int>("late"); }
  };
  process p("hand");
  auto& m = p.add<late>({"late"});
  EXPECT_THROW(m.declare_now(), std::logic_error);
  EXPECT_THROW(p.add_module({"nothing"}, [] { return std::unique_ptr<module_base>(); }), std::invalid_argument);
}

// Conditions no condition producer makes: finalize() refuses a module that reads them, naming the
// module, the type and the record (tests/fw/conditions_test.cpp covers the conditions served).
TEST(ProcessErrors, ConditionsWithoutAProducer) {
  struct alignment_record {};
  struct aligned final : global::EDProducer<> {
    aligned() : geometry(es_consumes<double, alignment_record>()) {}
    void produce(event&, const event_setup& s) const override { (void)s.get(geometry); }
    es_token<double, alignment_record> geometry;
  };
  process p("hand");
  p.add<aligned>({"aligned"});
  p.add_path("p", {"aligned"});
  const std::string e = finalize_error(p);
  EXPECT_NE(e.find("hand: module 'aligned': consumes conditions double of record "), std::string::npos) << e;
  EXPECT_NE(e.find("alignment_record, but no condition producer makes them"), std::string::npos) << e;
}

}  // namespace
