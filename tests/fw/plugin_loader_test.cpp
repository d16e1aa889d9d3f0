// SPDX-License-Identifier: Apache-2.0
// The plugin loader (heddle/fw/plugins.hpp) on real plugin libraries (plugins/, built with
// heddle_fw_add_plugin): which libraries a lookup opens, the per-directory caches (written, reused
// while fresh, rebuilt when a library is newer), the errors (unknown type, one name in two
// libraries, a broken library), that modules made by a plugin's makers run in both processors, and
// that the libraries are unloaded when the loader ends.
//
// Each test copies the plugin directories into a temporary folder of its own: the caches it writes
// and the dates it changes are its own, and ctest may run the tests in parallel. Which libraries
// were loaded is read from the test plugins' load log (plugins/test_plugins.hpp): a library's
// constructors run at each real load, caches included, and not when it was still loaded.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <heddle/fw/errors.hpp>
#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/plugins.hpp>
#include <heddle/fw/process.hpp>
#include <heddle/fw/processor.hpp>
#include <heddle/fw/registry.hpp>
#include <string>
#include <vector>

#include "test_plugins.hpp"

namespace plugin_loader_test {

namespace fw = heddle::fw;
namespace fs = std::filesystem;
using fw_test_plugins::analyzer_type;
using fw_test_plugins::producer_type;

namespace {

const char* const plugin_names[] = {"good", "duplicate", "empty_name", "unresolved"};

// True when `library` is loaded in this process (dlopen without loading it).
bool loaded(const std::string& library) {
  void* h = ::dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h) ::dlclose(h);
  return h != nullptr;
}

// The lines of a file, in order.
std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The message of the config_error that `f` throws ("" and a test failure if it throws none).
template <class F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const fw::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no config_error thrown";
  return "";
}

// A module type of the program itself.
class Local final : public fw::global::EDAnalyzer<> {
 public:
  explicit Local(const fw::parameter_set&) {}
  void analyze(const fw::event&, const fw::event_setup&) const override {}
};

class fw_plugin_loader : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "heddle-fw-plugins-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = fs::canonical(tmpl);
    for (const char* name : plugin_names) {
      fs::create_directory(root_ / name);
      const std::string file = std::string("libfw_test_plugin_") + name + ".so";
      fs::copy_file(fs::path(HEDDLE_FW_TEST_PLUGINS) / name / file, root_ / name / file);
    }
    ::unsetenv(fw_test_plugins::load_log_variable);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_ / "duplicate", fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }

  std::string dir(const char* name) const { return (root_ / name).string(); }
  std::string library(const char* name) const {
    return (root_ / name / (std::string("libfw_test_plugin_") + name + ".so")).string();
  }
  fs::path cache(const char* name) const { return root_ / name / fw::plugin_loader::cache_name; }
  // The test plugins loaded since the last call, in order ("good;duplicate;").
  static std::string loads() {
    const char* log = std::getenv(fw_test_plugins::load_log_variable);
    std::string out = log ? log : "";
    ::unsetenv(fw_test_plugins::load_log_variable);
    return out;
  }

  fs::path root_;
};

TEST_F(fw_plugin_loader, FindOpensOnlyTheLibraryThatHasTheType) {
  fw::plugin_loader loader({dir("duplicate"), dir("good")}, false);
  EXPECT_TRUE(loader.opened().empty()) << "the constructor opens nothing";
  const fw::registered_module m = loader.find(analyzer_type);
  EXPECT_EQ(m.name, analyzer_type);
  EXPECT_EQ(m.library, library("good"));
  EXPECT_NE(m.make, nullptr);
  EXPECT_EQ(loader.opened(), std::vector<std::string>{library("good")});
  EXPECT_TRUE(loaded(library("good")));
  // Both caches were built (each library loaded once and closed), then the good one opened again.
  EXPECT_EQ(loads(), "duplicate;good;good;");
  EXPECT_FALSE(loaded(library("duplicate"))) << "a library read for its directory's cache stays loaded";
  // Asking again opens nothing more.
  EXPECT_EQ(loader.find(analyzer_type).library, library("good"));
  EXPECT_EQ(loader.opened().size(), 1u);
  EXPECT_EQ(loads(), "");
}

// The duplicate library registers the producer's name too, in another directory of the path: an
// error naming both libraries, whichever comes first on the path and whichever type was asked for
// first; the good library's other type is still found.
TEST_F(fw_plugin_loader, OneNameInTwoDirectoriesNamesBothLibraries) {
  for (const auto& path : {std::vector<std::string>{dir("good"), dir("duplicate")},
                           std::vector<std::string>{dir("duplicate"), dir("good")}}) {
    fw::plugin_loader loader(path, false);
    const std::string message = config_error_of([&] { (void)loader.find(producer_type); });
    EXPECT_NE(message.find(std::string("'") + producer_type + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(library("good")), std::string::npos) << message;
    EXPECT_NE(message.find(library("duplicate")), std::string::npos) << message;
    EXPECT_TRUE(loader.opened().empty()) << "nothing is opened for a type that clashes";
    EXPECT_EQ(loader.find(analyzer_type).library, library("good"));
    // Now that the good library is open, its producer is registered: still a clash.
    EXPECT_EQ(config_error_of([&] { (void)loader.find(producer_type); }), message);
  }
}

TEST_F(fw_plugin_loader, AnUnknownTypeNamesEveryDirectorySearched) {
  const std::string absent = (root_ / "absent").string();
  fw::plugin_loader loader({dir("good"), absent, dir("duplicate")}, false);
  const std::string message = config_error_of([&] { (void)loader.find("fw_test_plugins::Nothing"); });
  EXPECT_NE(message.find("'fw_test_plugins::Nothing'"), std::string::npos) << message;
  EXPECT_NE(message.find("the program, " + dir("good") + ", " + absent + ", " + dir("duplicate")), std::string::npos)
      << message;
  EXPECT_TRUE(loader.opened().empty());
}

// A library that registers an empty name, or that cannot be loaded at all: the error names it (and
// the dynamic loader's reason), and the library is not left loaded.
TEST_F(fw_plugin_loader, ABrokenLibraryIsNamed) {
  {
    fw::plugin_loader loader({dir("empty_name")}, false);
    const std::string message = config_error_of([&] { (void)loader.find(producer_type); });
    EXPECT_NE(message.find(library("empty_name")), std::string::npos) << message;
    EXPECT_NE(message.find("empty name"), std::string::npos) << message;
    EXPECT_FALSE(loaded(library("empty_name")));
    EXPECT_EQ(loads(), "empty_name;");
    EXPECT_FALSE(fs::exists(cache("empty_name"))) << "no cache is written for a directory that failed";
  }
  {
    fw::plugin_loader loader({dir("unresolved")}, false);
    const std::string message = config_error_of([&] { (void)loader.find(producer_type); });
    EXPECT_NE(message.find(library("unresolved")), std::string::npos) << message;
    EXPECT_NE(message.find("heddle_fw_test_function_nobody_defines"), std::string::npos) << message;
    EXPECT_FALSE(loaded(library("unresolved")));
  }
  // A broken library elsewhere on the path does not hide what the path has once its directory
  // is read: every lookup that reads that directory fails, naming it.
  fw::plugin_loader loader({dir("good"), dir("empty_name")}, false);
  const std::string message = config_error_of([&] { (void)loader.find(analyzer_type); });
  EXPECT_NE(message.find(library("empty_name")), std::string::npos) << message;
}

TEST_F(fw_plugin_loader, CachesAreWrittenAndReusedWhileFresh) {
  {
    fw::plugin_loader loader({dir("good"), dir("duplicate")}, false);
    (void)loader.find(analyzer_type);
  }
  EXPECT_EQ(loads(), "good;duplicate;good;");
  ASSERT_TRUE(fs::exists(cache("good")));
  ASSERT_TRUE(fs::exists(cache("duplicate")));
  // One line per type, "type<TAB>library", sorted.
  EXPECT_EQ(lines_of(cache("good")), (std::vector<std::string>{std::string(analyzer_type) + "\t" + library("good"),
                                                               std::string(producer_type) + "\t" + library("good")}));
  EXPECT_EQ(lines_of(cache("duplicate")),
            std::vector<std::string>{std::string(producer_type) + "\t" + library("duplicate")});
  const auto good_written = fs::last_write_time(cache("good"));
  const auto duplicate_written = fs::last_write_time(cache("duplicate"));
  EXPECT_GE(good_written, fs::last_write_time(dir("good"))) << "the cache must not look stale at once";

  // A second loader reads the caches: it loads the library it opens, and no other.
  fw::plugin_loader loader({dir("good"), dir("duplicate")}, false);
  EXPECT_EQ(loader.find(analyzer_type).library, library("good"));
  EXPECT_EQ(loads(), "good;");
  EXPECT_EQ(loader.opened(), std::vector<std::string>{library("good")});
  EXPECT_EQ(fs::last_write_time(cache("good")), good_written);
  EXPECT_EQ(fs::last_write_time(cache("duplicate")), duplicate_written);
  // What the cache says is what the loader knows: the clash is found without loading the duplicate.
  const std::string message = config_error_of([&] { (void)loader.find(producer_type); });
  EXPECT_NE(message.find(library("duplicate")), std::string::npos) << message;
  EXPECT_EQ(loads(), "");
}

TEST_F(fw_plugin_loader, ACacheIsRebuiltWhenALibraryIsNewer) {
  {
    fw::plugin_loader loader({dir("good"), dir("duplicate")}, false);
    (void)loader.find(analyzer_type);
  }
  (void)loads();
  const auto duplicate_written = fs::last_write_time(cache("duplicate"));
  const auto touched = duplicate_written + std::chrono::seconds(2);
  fs::last_write_time(library("duplicate"), touched);

  fw::plugin_loader loader({dir("good"), dir("duplicate")}, false);
  EXPECT_EQ(loader.find(analyzer_type).library, library("good"));
  // The duplicate's directory was read anew (its library loaded once), the good one's was not: the
  // good library was loaded once, to be opened.
  EXPECT_EQ(loads(), "duplicate;good;");
  EXPECT_GE(fs::last_write_time(cache("duplicate")), touched) << "the rebuilt cache is as new as the library";
  EXPECT_EQ(lines_of(cache("duplicate")),
            std::vector<std::string>{std::string(producer_type) + "\t" + library("duplicate")});
  // And fresh from now on.
  fw::plugin_loader again({dir("good"), dir("duplicate")}, false);
  (void)again.find(analyzer_type);
  EXPECT_EQ(loads(), "");  // the good library is still open (the first loader), nothing else loaded
}

// A path may name directories that do not exist, files, and directories this user cannot list:
// they are skipped. The unreadable directory holds the duplicate plugin, so reading it would be a
// clash: the lookup succeeds only if it was skipped.
TEST_F(fw_plugin_loader, DirectoriesThatCannotBeReadAreSkipped) {
  std::vector<std::string> path = {(root_ / "absent").string(), library("good"), dir("good")};
  fs::permissions(dir("duplicate"), fs::perms::none);
  const bool can_deny = ::access(dir("duplicate").c_str(), R_OK) != 0;  // root reads anything
  if (can_deny) path.push_back(dir("duplicate"));
  fw::plugin_loader loader(path, false);
  EXPECT_EQ(loader.find(producer_type).library, library("good"));
  EXPECT_EQ(loader.opened(), std::vector<std::string>{library("good")});
  EXPECT_FALSE(fs::exists(root_ / "absent")) << "a directory of the path is never made";
  if (!can_deny) std::cout << "[ note ] running as root: the unreadable directory was not tried\n";
}

// The loader closes what it opened when it ends: the libraries are unloaded (they are built with
// -fno-gnu-unique, see cmake/heddle_fw_plugin.cmake) and their types unregistered. A new loader
// loads them afresh.
TEST_F(fw_plugin_loader, LibrariesAreUnloadedWhenTheLoaderEnds) {
  for (int round = 0; round < 2; ++round) {
    {
      fw::plugin_loader loader({dir("good")}, false);
      (void)loader.find(producer_type);
      (void)loader.find(analyzer_type);
      EXPECT_TRUE(loaded(library("good")));
      EXPECT_TRUE(fw::find_registered_module(producer_type).has_value());
    }
    EXPECT_FALSE(loaded(library("good"))) << "round " << round;
    EXPECT_FALSE(fw::find_registered_module(producer_type).has_value());
    EXPECT_FALSE(fw::find_registered_module(analyzer_type).has_value());
  }
  EXPECT_EQ(loads(), "good;good;good;") << "built the cache once, then loaded afresh by each loader";
}

TEST_F(fw_plugin_loader, ThePathVariableAddsDirectories) {
  const std::string absent = (root_ / "absent").string();
  ::setenv(fw::plugin_loader::path_variable, (absent + "::" + dir("good")).c_str(), 1);
  fw::plugin_loader loader({dir("unresolved")}, true);
  fw::plugin_loader without({}, false);
  ::unsetenv(fw::plugin_loader::path_variable);
  EXPECT_EQ(loader.path(), (std::vector<std::string>{dir("unresolved"), absent, dir("good")}));
  EXPECT_TRUE(without.path().empty());
  const std::string message = config_error_of([&] { (void)without.find(analyzer_type); });
  EXPECT_NE(message.find("searched the program;"), std::string::npos) << message;
}

}  // namespace

HEDDLE_FW_MODULE(Local);

namespace {

// The test program's own reader of the plugin's product: the product type, std::vector<double>,
// is matched across the library boundary, and every value is checked against values_for.
class values_reader final : public fw::global::EDAnalyzer<> {
 public:
  values_reader(std::atomic<std::uint64_t>* seen, std::atomic<std::uint64_t>* wrong)
      : token_(consumes<std::vector<double>>(fw::input_tag("values"))), seen_(seen), wrong_(wrong) {}
  void analyze(const fw::event& e, const fw::event_setup&) const override {
    const std::vector<double>& v = e.get(token_);
    seen_->fetch_add(v.size(), std::memory_order_relaxed);
    if (v != fw_test_plugins::values_for(e.id().event)) wrong_->fetch_add(1, std::memory_order_relaxed);
  }

 private:
  fw::get_token<std::vector<double>> token_;
  std::atomic<std::uint64_t>* seen_;
  std::atomic<std::uint64_t>* wrong_;
};

// Modules made by the plugin's makers run in a process, in both processors: the producer
// (global::) makes the product, the plugin's one:: analyzer and the program's reader check it, and
// both processors give the same checksum. The process ends before the loader, which then unloads
// the library.
TEST_F(fw_plugin_loader, ModulesFromAPluginRunInBothProcessors) {
  constexpr std::uint64_t events = 200;
  std::uint64_t expected_values = 0;
  for (std::uint64_t e = 0; e < events; ++e) expected_values += fw_test_plugins::values_for(e).size();
  std::uint64_t checksums[2] = {};
  {
    fw::plugin_loader loader({dir("good")}, false);
    const fw::registered_module producer = loader.find(producer_type);
    const fw::registered_module checker = loader.find(analyzer_type);
    for (int threaded = 0; threaded < 2; ++threaded) {
      std::atomic<std::uint64_t> seen{0}, wrong{0};
      fw::process p("plugin_loader_test");
      const fw::parameter_set none;
      const fw::parameter_set checker_parameters = fw::parameter_set::from_json(R"({"src": "values"})", "checker");
      // The context a configuration would give them.
      const std::string named = "plugin_loader_test: test", file = "plugin_loader_test", where = "test";
      const std::string values_label = "values", checker_label = "checker";
      p.add_module({"values", producer.name, "test", {}}, [&] {
        return producer.make(none,
                             fw::module_context{fw::module_role::producer, none, named, file, where, values_label});
      });
      fw::module_base& c = p.add_module({"checker", checker.name, "test", {}}, [&] {
        return checker.make(checker_parameters,
                            fw::module_context{fw::module_role::analyzer, none, named, file, where, checker_label});
      });
      EXPECT_EQ(c.kind(), fw::module_kind::one);
      EXPECT_EQ(c.role(), fw::module_role::analyzer);
      EXPECT_TRUE(checker_parameters.unread().empty());
      p.add<values_reader>({"reader", "values_reader", "test", {}}, &seen, &wrong);
      p.add_end_path("check", {"checker", "reader"});
      fw::run_options o;
      o.events = events;
      o.events_per_run = 50;
      o.events_in_flight = 8;
      o.threads = 2;
      const fw::run_report r = threaded ? fw::run_threaded(p, o) : fw::run_single_threaded(p, o);
      EXPECT_EQ(r.events, events);
      EXPECT_EQ(seen.load(), expected_values);
      EXPECT_EQ(wrong.load(), 0u);
      checksums[threaded] = r.checksum;
    }
    EXPECT_TRUE(loaded(library("good")));
  }
  EXPECT_NE(checksums[0], 0u);
  EXPECT_EQ(checksums[0], checksums[1]) << "single-threaded and threaded";
  EXPECT_FALSE(loaded(library("good")));
}

}  // namespace

namespace {

// The program's own types need no path, and are found before any directory is read.
TEST_F(fw_plugin_loader, TheProgramsOwnTypesComeFirst) {
  fw::plugin_loader loader({dir("empty_name")}, false);  // reading it would fail
  const fw::registered_module m = loader.find("Local");
  EXPECT_EQ(m.name, "Local");
  EXPECT_NE(m.make, nullptr);
  EXPECT_EQ(fs::path(m.library), fs::read_symlink("/proc/self/exe")) << "the program's own path";
  EXPECT_TRUE(loader.opened().empty());
  EXPECT_EQ(loads(), "");
  const std::vector<std::string> names = fw::registered_module_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "Local"), names.end());
}

}  // namespace

}  // namespace plugin_loader_test
