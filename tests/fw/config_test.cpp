// SPDX-License-Identifier: Apache-2.0
// Reading configurations: the study's files as they are (where they lie beside the repository), the
// project's own, and one clear line for each bad input.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>

#include "fw_test_support.hpp"
#include "study/study.hpp"

namespace config_test {
namespace {

using namespace heddle::fw;
using namespace heddle::fw::study;  // the timing modules the configurations use
using fw_test::cms;

// A small valid configuration; `producers` and `extra_process` are spliced in.
std::string config_text(
    const std::string& producers = R"({"@label":"a","@type":"demo::FastProducer"})",
    const std::string& filters = R"({"@label":"f","@type":"demo::PassFilter","toGet":[{"label":"a","product":""}]})",
    const std::string& options = R"("nSimultaneousEvents":2,"busyWaitScaleFactor":2.2e7)",
    const std::string& source = R"("@type":"demo::SimpleSource","iterations":10)",
    const std::string& paths = R"({"p":["f"]})") {
  return R"({"process":{"label":"T","options":{)" + options + R"(},"source":{)" + source + R"(},"filters":[)" +
         filters + R"(],"producers":[)" + producers + R"(],"paths":)" + paths + "}}";
}

// The config_error message of reading `text` and building its process (where each module checks
// its keys), or "" if both went well.
std::string error_of(const std::string& text) {
  try {
    (void)make_process(parse_config(text, "t.json"));
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

TEST(Config, ReadsTheHighPileupConfigurationAsItIs) {
  FW_TEST_NEEDS_CMS(fw_test::hipileup);
  const process_config c = load_config(cms(fw_test::hipileup));
  EXPECT_EQ(c.events_in_flight, 10u);
  EXPECT_DOUBLE_EQ(c.options.get<double>("busyWaitScaleFactor"), 18351400.0);  // an option the study adds
  EXPECT_EQ(c.events, 1000u);
  EXPECT_EQ(c.modules.size(), 491u);
  ASSERT_EQ(c.paths.size(), 2u);
  std::size_t producers = 0, with_slash = 0;
  for (const auto& m : c.modules) {
    producers += m.role == module_role::producer;
    with_slash += m.label.find('/') != std::string::npos;
    EXPECT_EQ(m.type.rfind("demo::EventTimes", 0), 0u) << m.label;  // the type as the file names it
    const module_settings s = settings_of(c, m);
    EXPECT_EQ(s.type->name.rfind("EventTimes", 0), 0u) << m.label;
    EXPECT_FALSE(s.event_times.empty()) << m.label;
  }
  EXPECT_EQ(producers, 489u);
  EXPECT_GT(with_slash, 0u);
}

TEST(Config, ReadsTheMinimumBiasConfigurationWithItsThreadTypes) {
  FW_TEST_NEEDS_CMS(fw_test::minbias);
  const process_config c = load_config(cms(fw_test::minbias));
  EXPECT_EQ(c.events_in_flight, 2u);
  EXPECT_EQ(c.events, 200u);
  std::size_t unsafe = 0, between_modules = 0;
  for (const auto& m : c.modules) {
    const thread_type t = settings_of(c, m).threads;
    unsafe += t == thread_type::unsafe;
    between_modules += t == thread_type::safe_between_modules;
  }
  EXPECT_EQ(unsafe, 4u);
  EXPECT_EQ(between_modules, 1u);
}

// The study's small examples, as they are: heddle reads the study's files unchanged.
TEST(Config, ReadsEveryExampleConfiguration) {
  const char* const names[] = {"simple_config.json", "test_config.json", "test_acquire_config.json",
                               "filter_exception_config.json", "producer_exception_config.json"};
  for (const char* name : names) FW_TEST_NEEDS_CMS(std::string("examples/") + name);
  for (const char* name : names) {
    const process_config c = load_config(cms(std::string("examples/") + name));
    EXPECT_EQ(c.events, 3000u) << name;
    EXPECT_FALSE(c.paths.empty()) << name;
  }
  const process_config t = load_config(cms("examples/test_config.json"));
  ASSERT_EQ(t.modules.size(), 6u);
  EXPECT_EQ(t.modules[0].label, "alpha");
  EXPECT_DOUBLE_EQ(settings_of(t, t.modules[0]).average_time, 0.01);
  EXPECT_EQ(t.modules[5].type, "demo::ThreadSaferGetterFilter");
  const module_settings getter = settings_of(t, t.modules[5]);
  ASSERT_EQ(getter.to_get.size(), 2u);
  EXPECT_EQ(getter.to_get[1].label, "beta");
}

// The project's own configurations (tests/fw/configs/), which the framework's tests run on.
TEST(Config, ReadsTheProjectsOwnConfigurations) {
  for (const char* name :
       {"one_filter.json", "chain.json", "chain_acquire.json", "throwing_filter.json", "throwing_producer.json"}) {
    const process_config c = load_config(fw_test::own(name));
    EXPECT_EQ(c.events, 500u) << name;
    EXPECT_FALSE(c.paths.empty()) << name;
  }
  const process_config t = load_config(fw_test::own("chain.json"));
  ASSERT_EQ(t.modules.size(), 6u);
  EXPECT_EQ(t.events_in_flight, 4u);
  EXPECT_EQ(t.modules[0].label, "hits");                   // producers first, then filters
  EXPECT_EQ(t.modules[0].type, "demo::BusyWaitProducer");  // as the file names it
  EXPECT_EQ(settings_of(t, t.modules[0]).type->name, "BusyWaitProducer");
  EXPECT_DOUBLE_EQ(settings_of(t, t.modules[0]).average_time, 0.01);
  EXPECT_EQ(settings_of(t, t.modules[1]).threads, thread_type::safe_between_modules);
  EXPECT_EQ(settings_of(t, t.modules[2]).threads, thread_type::unsafe);
  EXPECT_EQ(t.modules[5].label, "calo");
  const module_settings calo = settings_of(t, t.modules[5]);
  EXPECT_EQ(calo.type->name, "ThreadSaferGetterFilter");
  ASSERT_EQ(calo.to_get.size(), 2u);
  EXPECT_EQ(calo.to_get[1].label, "clusters");
  ASSERT_EQ(t.paths.size(), 2u);
  // chain_acquire.json is chain.json with its producers waiting through ExternalWork's acquire.
  const process_config a = load_config(fw_test::own("chain_acquire.json"));
  ASSERT_EQ(a.modules.size(), t.modules.size());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.modules[i].label, t.modules[i].label);
    EXPECT_EQ(settings_of(a, a.modules[i]).type->name, "SleepingWithAcquireProducer");
  }
}

TEST(Config, IterationsMayBeAString) {
  const process_config c = parse_config(config_text(R"({"@label":"a","@type":"FastProducer"})",
                                                    R"({"@label":"f","@type":"PassFilter"})",
                                                    R"("nSimultaneousEvents":2,"busyWaitScaleFactor":1)",
                                                    R"("@type":"demo::SimpleSource","iterations":"200")"),
                                        "t.json");
  EXPECT_EQ(c.events, 200u);
  EXPECT_NE(error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", R"({"@label":"f","@type":"PassFilter"})",
                                 R"("nSimultaneousEvents":2,"busyWaitScaleFactor":1)", R"("iterations":"20x")")),
            "");
}

TEST(Config, ReadsHeddlesExtensions) {
  const std::string text = R"({"process":{
    "options":{"nSimultaneousEvents":3,"busyWaitScaleFactor":1e7,"nThreads":2,"timeScale":0.5,"wait":"timer",
               "singleThreaded":true,"quiet":true,"json":"r.json","timeline":"t.csv","idleSpinUs":20},
    "source":{"iterations":12,"eventsPerRun":4},
    "producers":[{"@label":"a","@type":"ThreadSafeProducer","value":7,"productLabel":"x"}],
    "filters":[{"@label":"f","@type":"PassFilter","pass":[true,false],"toGet":[{"label":"a","product":"x"}]}],
    "outputs":[{"@label":"o","@type":"OutputModule","selectEvents":["p"],"threadType":"ThreadUnsafe"}],
    "paths":{"p":["f"]},"endPaths":{"e":["o"]}}})";
  const process_config c = parse_config(text, "t.json");
  EXPECT_EQ(c.threads, 2u);
  EXPECT_DOUBLE_EQ(c.options.get<double>("timeScale"), 0.5);  // options the study's timing modules add
  EXPECT_EQ(c.options.get<std::string>("wait"), "timer");
  EXPECT_EQ(c.events_per_run, 4u);
  EXPECT_TRUE(c.single_threaded);
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.json_file, "r.json");
  EXPECT_EQ(c.timeline_file, "t.csv");
  EXPECT_EQ(c.idle_spin_us, 20u);
  ASSERT_EQ(c.modules.size(), 3u);
  EXPECT_EQ(settings_of(c, c.modules[0]).value, 7);
  EXPECT_EQ(settings_of(c, c.modules[1]).pass, (std::vector<bool>{true, false}));
  EXPECT_EQ(settings_of(c, c.modules[2]).threads, thread_type::unsafe);
  EXPECT_EQ(c.modules[2].role, module_role::output);
  EXPECT_EQ(c.modules[2].select_paths, std::vector<std::string>{"p"});
  ASSERT_EQ(c.end_paths.size(), 1u);
}

TEST(ConfigErrors, MalformedJsonGivesFileLineAndColumn) {
  const std::string e = error_of("{\"process\":\n  {\"options\": }\n}");
  EXPECT_EQ(e.rfind("t.json:2:15: malformed JSON", 0), 0u) << e;
  EXPECT_EQ(error_of("").rfind("t.json:1:1: malformed JSON", 0), 0u) << error_of("");
}

TEST(ConfigErrors, AMissingKeyNamesTheModuleAndTheKey) {
  const std::string e = error_of(config_text(R"({"@label":"alpha","@type":"demo::BusyWaitProducer"})"));
  EXPECT_NE(e.find("process.producers[0] 'alpha'"), std::string::npos) << e;
  EXPECT_NE(e.find("missing required key 'averageTime'"), std::string::npos) << e;
  const std::string l = error_of(config_text(R"({"@type":"demo::FastProducer"})"));
  EXPECT_NE(l.find("process.producers[0]: missing required key '@label'"), std::string::npos) << l;
  const std::string o = error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", "",
                                             R"("busyWaitScaleFactor":1)"));
  EXPECT_NE(o.find("process.options: missing required key 'nSimultaneousEvents'"), std::string::npos) << o;
  const std::string s = error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", "",
                                             R"("nSimultaneousEvents":2,"busyWaitScaleFactor":1)",
                                             R"("@type":"SimpleSource")"));
  EXPECT_NE(s.find("process.source: missing required key 'iterations'"), std::string::npos) << s;
}

TEST(ConfigErrors, AnUnknownTypeListsTheKnownOnes) {
  // Every type is looked up among the registered ones (the program's, the study's built-in
  // plugin's, plugin libraries'): the reader takes any, and building the process names what it
  // searched.
  std::string e;
  try {
    (void)make_process(parse_config(config_text(R"({"@label":"a","@type":"demo::NoSuchProducer"})"), "t.json"));
  } catch (const config_error& x) {
    e = x.what();
  }
  // The study's timing types are registered by its built-in plugin, each once in the list.
  EXPECT_NE(e.find("'a': unknown module type 'demo::NoSuchProducer' (registered: "), std::string::npos) << e;
  EXPECT_NE(e.find("BusyWaitProducer"), std::string::npos) << e;
  EXPECT_NE(e.find("ThreadSaferGetterFilter"), std::string::npos) << e;
  EXPECT_EQ(e.find("demo::BusyWaitProducer"), std::string::npos) << e;
  // A filter type among the producers is the wrong kind.
  const std::string w = error_of(config_text(R"({"@label":"a","@type":"PassFilter"})"));
  EXPECT_NE(w.find("'PassFilter' is a filter type, not a producer"), std::string::npos) << w;
  const std::string an = error_of(
      R"({"process":{"options":{"nSimultaneousEvents":1,"busyWaitScaleFactor":1},"source":{"iterations":1},
          "analyzers":[{"@label":"x","@type":"FastProducer"}],"paths":{}}})");
  EXPECT_EQ(an, "t.json: process.analyzers[0] 'x': @type: 'FastProducer' is a producer type, not an analyzer");
}

TEST(ConfigErrors, UnknownKeysAreReported) {
  const std::string e =
      error_of(config_text(R"({"@label":"a","@type":"BusyWaitProducer","averagTime":0.1,"averageTime":1})"));
  EXPECT_NE(e.find("key 'averagTime' does not apply to type BusyWaitProducer"), std::string::npos) << e;
  const std::string o = error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", "",
                                             R"("nSimultaneousEvents":2,"busyWaitScaleFactor":1,"nThread":2)"));
  EXPECT_NE(o.find("process.options: unknown key 'nThread'"), std::string::npos) << o;
  const std::string t =
      error_of(config_text(R"({"@label":"a","@type":"FastProducer","toGet":[{"label":"b","prod":""}]})"));
  EXPECT_NE(t.find("toGet[0]: unknown key 'prod'"), std::string::npos) << t;
}

TEST(ConfigErrors, NegativeAndNonNumericTimes) {
  const std::string e =
      error_of(config_text(R"({"@label":"a","@type":"EventTimesBusyWaitProducer","eventTimes":[0.1,-0.5]})"));
  EXPECT_NE(e.find("process.producers[0] 'a': eventTimes[1]: negative time -0.5"), std::string::npos) << e;
  const std::string a = error_of(config_text(R"({"@label":"a","@type":"SleepingProducer","averageTime":"1"})"));
  EXPECT_NE(a.find("averageTime: expected a time in seconds, found string"), std::string::npos) << a;
  const std::string m =
      error_of(config_text(R"({"@label":"a","@type":"SleepingProducer","averageTime":1,"minTime":2})"));
  EXPECT_NE(m.find("minTime is above averageTime"), std::string::npos) << m;
}

TEST(ConfigErrors, BadOptionValues) {
  auto opts = [](const std::string& o) {
    return error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", "", o));
  };
  EXPECT_NE(opts(R"("nSimultaneousEvents":0,"busyWaitScaleFactor":1)").find("expected at least 1"), std::string::npos);
  EXPECT_NE(opts(R"("nSimultaneousEvents":-3,"busyWaitScaleFactor":1)").find("expected a count"), std::string::npos);
  EXPECT_NE(opts(R"("nSimultaneousEvents":2,"busyWaitScaleFactor":0)").find("expected a positive number"),
            std::string::npos);
  EXPECT_NE(opts(R"("nSimultaneousEvents":2,"busyWaitScaleFactor":1,"wait":"nap")").find("unknown wait mode 'nap'"),
            std::string::npos);
  EXPECT_NE(
      opts(R"("nSimultaneousEvents":2,"busyWaitScaleFactor":1,"quiet":"yes")").find("quiet: expected true or false"),
      std::string::npos);
  const std::string t = error_of(config_text(R"({"@label":"a","@type":"FastProducer","threadType":"Sometimes"})"));
  EXPECT_NE(t.find("unknown threadType 'Sometimes'"), std::string::npos) << t;
}

// The tables of keys (heddle/fw/detail/config_keys.hpp) check each key's type and range and list the known
// keys, in the options, the source, toGet and the built-in modules' entries alike.
TEST(ConfigErrors, TheKeyTablesNameTheKeyAndWhatWasExpected) {
  auto opts = [](const std::string& o) {
    return error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", "", R"("nSimultaneousEvents":2,)" + o));
  };
  EXPECT_NE(
      opts(R"("numberOfConcurrentLumis":2)")
          .find("t.json: process.options: unknown key 'numberOfConcurrentLumis' (known here: nSimultaneousEvents, "
                "busyWaitScaleFactor, nThreads, timeScale, wait, singleThreaded, quiet, json, timeline, idleSpinUs, "
                "numberOfConcurrentLuminosityBlocks)"),
      std::string::npos);
  EXPECT_EQ(opts(R"("nThreads":true)"), "t.json: process.options.nThreads: expected a count, found boolean");
  EXPECT_EQ(opts(R"("nThreads":4097)"), "t.json: process.options.nThreads: expected at most 4096, found 4097");
  EXPECT_EQ(opts(R"("idleSpinUs":1000001)"),
            "t.json: process.options.idleSpinUs: expected at most 1000000, found 1000001");
  EXPECT_EQ(opts(R"("numberOfConcurrentLuminosityBlocks":0)"),
            "t.json: process.options.numberOfConcurrentLuminosityBlocks: expected at least 1, found 0");
  EXPECT_EQ(opts(R"("timeScale":"fast")"), "t.json: process.options.timeScale: expected a number, found string");
  EXPECT_EQ(opts(R"("json":3)"), "t.json: process.options.json: expected a string, found number");

  auto source = [](const std::string& s) {
    return error_of(config_text(R"({"@label":"a","@type":"FastProducer"})", "", R"("nSimultaneousEvents":2)", s));
  };
  EXPECT_EQ(source(R"("iterations":10,"eventsPerLumi":[2])"),
            "t.json: process.source.eventsPerLumi: expected a count, found array");
  EXPECT_EQ(source(R"("iterations":0)"), "t.json: process.source.iterations: expected at least 1, found 0");
  EXPECT_EQ(
      source(R"("iterations":10,"lumisPerRun":2)"),
      "t.json: process.source.lumisPerRun: needs eventsPerLumi (runs are lumisPerRun lumis of eventsPerLumi events)");
  EXPECT_NE(source(R"("iterations":10,"events":2)")
                .find("process.source: unknown key 'events' (known here: @type, iterations, "
                      "eventsPerRun, eventsPerLumi, lumisPerRun)"),
            std::string::npos);

  EXPECT_EQ(error_of(config_text(R"({"@label":"a","@type":"FastProducer","toGet":[{"product":"x"}]})")),
            "t.json: process.producers[0] 'a': toGet[0]: missing required key 'label'");
  EXPECT_EQ(error_of(config_text(
                R"({"@label":"a","@type":"EventTimesBusyWaitParallelForPassFilter","eventTimes":[1],"nRanges":0})",
                "")),
            "t.json: process.producers[0] 'a': @type: 'EventTimesBusyWaitParallelForPassFilter' is a filter type, not "
            "a producer");
  EXPECT_EQ(error_of(config_text(
                R"({"@label":"a","@type":"FastProducer"})",
                R"({"@label":"f","@type":"EventTimesSleepingParallelForPassFilter","eventTimes":[1],"nRanges":0})")),
            "t.json: process.filters[0] 'f': nRanges: expected at least 1, found 0");
  EXPECT_EQ(error_of(config_text(R"({"@label":"a","@type":"ThreadSafeProducer","value":1.5})")),
            "t.json: process.producers[0] 'a': value: expected an integer, found number");
  EXPECT_EQ(error_of(config_text(R"({"@label":"a","@type":"FastProducer"})",
                                 R"({"@label":"f","@type":"PassFilter","pass":[1]})")),
            "t.json: process.filters[0] 'f': pass[0]: expected true or false, found number");
  EXPECT_EQ(
      error_of(config_text(R"({"@label":"a","@type":"FastProducer","pass":[true]})")),
      "t.json: process.producers[0] 'a': key 'pass' does not apply to type FastProducer (it takes: @label, @type, "
      "threadType, toGet, productLabel)");
}

TEST(ConfigErrors, AMissingFileSaysSo) {
  try {
    load_config("/nonexistent/heddle.json");
    FAIL();
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/heddle.json: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

// --set and process.commandLine: parameters set from outside the file, before the modules read them.
TEST(ConfigOverrides, SetParametersOfStudyAndRegisteredModules) {
  const std::string text = config_text(R"({"@label":"a","@type":"demo::BusyWaitProducer","averageTime":0.25},
                                          {"@label":"x","@type":"test::Thing","ptMin":5,"cuts":{"eta":2.4}})");
  const process_config c = parse_config(text, "t.json",
                                        {{"a.averageTime", "0.5", "--set"},
                                         {"x.ptMin", "7.5", "--set"},
                                         {"x.cuts.eta", "1.3", "--set"},
                                         {"x.cuts.new", "[1, 2]", "--set"},
                                         {"x.name", "out.h5", "--set"}});
  EXPECT_DOUBLE_EQ(settings_of(c, c.modules[0]).average_time, 0.5);
  const parameter_set& ps = c.modules[1].parameters;
  EXPECT_DOUBLE_EQ(ps.get<double>("ptMin"), 7.5);
  EXPECT_DOUBLE_EQ(ps.get<parameter_set>("cuts").get<double>("eta"), 1.3);
  EXPECT_EQ(ps.get<parameter_set>("cuts").get<std::vector<int>>("new"), (std::vector<int>{1, 2}));
  EXPECT_EQ(ps.get<std::string>("name"), "out.h5");  // not JSON: the text itself
}

TEST(ConfigOverrides, BadOverridesAreNamed) {
  auto error = [](std::vector<parameter_override> o) {
    try {
      (void)parse_config(config_text(), "t.json", o);
    } catch (const config_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error({{"nosuch.x", "1", "--set"}}), "--set nosuch.x: no module labelled 'nosuch' in t.json");
  EXPECT_EQ(error({{"a", "1", "--pileup"}}),
            "--pileup a: expected LABEL.PARAMETER (a module's label and one of its parameters)");
  EXPECT_EQ(error({{"a.@type", "X", "--set"}}), "--set a.@type: not a parameter name: '@type'");
}

TEST(ConfigOverrides, TheFileDeclaresItsCommandLineOptions) {
  const std::string text =
      R"({"process":{"options":{"nSimultaneousEvents":1,"busyWaitScaleFactor":1},"source":{"iterations":1},
    "commandLine":{"pileup":{"parameter":"mixing.mu","help":"pile-up"},"out":{"parameter":"output.fileName"}},
    "producers":[{"@label":"a","@type":"demo::FastProducer"}],"paths":{"p":["a"]}}})";
  const std::vector<command_line_parameter> d = parse_command_line_parameters(text, "t.json");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, "out");
  EXPECT_EQ(d[0].target, "output.fileName");
  EXPECT_EQ(d[1].name, "pileup");
  EXPECT_EQ(d[1].help, "pile-up");
  EXPECT_NO_THROW((void)parse_config(text, "t.json"));
  std::string bad = text;
  bad.replace(bad.find("\"parameter\":\"mixing.mu\""), 23, "\"parameter\":\"mixing\"");
  try {
    (void)parse_config(bad, "t.json");
    FAIL() << "a target without a parameter";
  } catch (const config_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.json: process.commandLine.pileup.parameter: expected LABEL.PARAMETER, not 'mixing'");
  }
  std::string bad_name = text;
  bad_name.replace(bad_name.find("\"out\":"), 6, "\"o t\":");
  EXPECT_THROW((void)parse_command_line_parameters(bad_name, "t.json"), config_error);
}

}  // namespace

}  // namespace config_test
