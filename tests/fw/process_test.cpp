// Checking a process as a whole: labels, roles, cycles, paths and end paths.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>
#include "graph.hpp"  // src/fw

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;
using fw_test::add_probe;
using fw_test::decl;

std::string finalize_error(process& p) {
  try {
    p.finalize();
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

std::string config_error_of(const std::string& producers, const std::string& filters, const std::string& paths) {
  const std::string text = R"({"process":{"options":{"nSimultaneousEvents":1,"busyWaitScaleFactor":1},"source":{"iterations":1},"producers":[)" +
                           producers + R"(],"filters":[)" + filters + R"(],"paths":)" + paths + "}}";
  try {
    process p = make_process(parse_config(text, "t.json"), {});
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
    process p = make_process(load_config(fw_test::cms(name)), {});
    ASSERT_NO_THROW(p.finalize()) << name;
    const detail::graph& g = detail::graph_of(p);
    std::size_t edges = 0;
    for (const auto& n : g.nodes) edges += n.producers.size();
    EXPECT_EQ(g.num_edges, edges + g.num_steps()) << name;
  }
}

TEST(ProcessErrors, UnknownLabelInToGetAndInAPath) {
  const std::string t = config_error_of(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"ghost","product":""}]})",
                                        R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(t.find("t.json: process.producers[0] 'a': toGet[0]: unknown label 'ghost'"), std::string::npos) << t;
  const std::string p = config_error_of(R"({"@label":"a","@type":"FastProducer"})", R"({"@label":"f","@type":"PassFilter"})",
                                        R"({"p":["f","nowhere"]})");
  EXPECT_NE(p.find("path 'p'[1]: unknown label 'nowhere'"), std::string::npos) << p;
}

TEST(ProcessErrors, ACycleIsPrinted) {
  const std::string e = config_error_of(
      R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"b","product":""}]},
         {"@label":"b","@type":"FastProducer","toGet":[{"label":"c","product":""}]},
         {"@label":"c","@type":"FastProducer","toGet":[{"label":"a","product":""}]})",
      R"({"@label":"f","@type":"PassFilter","toGet":[{"label":"a","product":""}]})", R"({"p":["f"]})");
  EXPECT_NE(e.find("dependency cycle: 'a' -> 'b' -> 'c' -> 'a'"), std::string::npos) << e;
  const std::string self = config_error_of(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"a","product":""}]})",
                                           R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(self.find("dependency cycle: 'a' -> 'a'"), std::string::npos) << self;
}

TEST(ProcessErrors, AFilterAskedForAsAProduct) {
  const std::string e = config_error_of(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"f","product":""}]})",
                                        R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(e.find("toGet[0]: 'f' is a filter, not a producer"), std::string::npos) << e;
}

TEST(ProcessErrors, AProducerOnAPath) {
  const std::string e = config_error_of(R"({"@label":"a","@type":"FastProducer"})", R"({"@label":"f","@type":"PassFilter"})",
                                        R"({"p":["a"]})");
  EXPECT_NE(e.find("path 'p'[0]: 'a' is a producer, not a filter"), std::string::npos) << e;
}

TEST(ProcessErrors, DuplicateLabelsAndProductInstances) {
  const std::string d = config_error_of(R"({"@label":"a","@type":"FastProducer"},{"@label":"a","@type":"FastProducer"})",
                                        R"({"@label":"f","@type":"PassFilter"})", R"({"p":["f"]})");
  EXPECT_NE(d.find("process.producers[1] 'a': label already used by process.producers[0]"), std::string::npos) << d;
  const std::string i = config_error_of(R"({"@label":"a","@type":"FastProducer"})",
                                        R"({"@label":"f","@type":"PassFilter","toGet":[{"label":"a","product":"tracks"}]})",
                                        R"({"p":["f"]})");
  EXPECT_NE(i.find("'a' has no product instance 'tracks'"), std::string::npos) << i;
}

TEST(ProcessErrors, OutputModulesBelongOnEndPaths) {
  process p("hand");
  add_probe(p, decl("f", module_role::filter), [](const event_view&) { return 1; });
  add_probe(p, decl("o", module_role::output), [](const event_view&) { return 1; });
  p.add_path("p", {"f"});
  EXPECT_NE(finalize_error(p).find("output module on no end path"), std::string::npos) << finalize_error(p);

  process q("hand");
  add_probe(q, decl("f", module_role::filter), [](const event_view&) { return 1; });
  add_probe(q, decl("o", module_role::output), [](const event_view&) { return 1; });
  q.add_path("p", {"f"});
  q.add_end_path("e", {"f"});
  EXPECT_NE(finalize_error(q).find("end path 'e'[0]: 'f' is a filter, not an output module"), std::string::npos)
      << finalize_error(q);

  process r("hand");
  module_decl o = decl("o", module_role::output);
  o.select_paths = {"nope"};
  add_probe(r, o, [](const event_view&) { return 1; });
  r.add_end_path("e", {"o"});
  EXPECT_NE(finalize_error(r).find("selectEvents: unknown path 'nope'"), std::string::npos) << finalize_error(r);
}

}  // namespace
