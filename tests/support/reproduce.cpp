// SPDX-License-Identifier: Apache-2.0
// The failure report of tests/support/reproduce.hpp: a GoogleTest listener that prints, after each
// failed test, how to run it again the same way.
#include "reproduce.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <heddle/core/detail/sanitizers.hpp>
#include <heddle/core/runtime.hpp>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace heddle_test {
namespace {

// The build the program was compiled in (tests/CMakeLists.txt: HEDDLE_TEST_FLAVOUR).
#ifndef HEDDLE_TEST_FLAVOUR
#define HEDDLE_TEST_FLAVOUR "unnamed"
#endif

std::string build_description() {
  std::string s = HEDDLE_TEST_FLAVOUR;
#if defined(__clang__)
  s += " (clang " __clang_version__;
  while (s.back() == ' ') s.pop_back();  // __clang_version__ ends in a space
#else
  s += " (g++ " __VERSION__;
#endif
#if HEDDLE_DETAIL_TSAN
  s += ", ThreadSanitizer";
#endif
#if HEDDLE_DETAIL_ASAN
  s += ", AddressSanitizer";
#endif
#if defined(HEDDLE_TEST_UBSAN)
  s += ", UndefinedBehaviorSanitizer";
#endif
#if defined(NDEBUG)
  s += ", NDEBUG";
#endif
  return s + ")";
}

// What the current test recorded; cleared as each test starts. Tests record from any thread.
struct record {
  std::mutex m;
  std::vector<std::string> seeds;
};

record& current() {
  static record r;
  return r;
}

// The heddle settings of the environment (HEDDLE_*), as "NAME=value" words.
std::vector<std::string> heddle_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    if (std::string_view(*e).starts_with("HEDDLE_")) out.emplace_back(*e);
  }
  return out;
}

std::string workers() {
  std::string s;
  try {
    s = std::to_string(heddle::default_thread_count()) + " by default";
  } catch (const std::exception& e) {
    s = std::string("no default (") + e.what() + ")";
  }
  return s + " (cores: " + std::to_string(std::thread::hardware_concurrency()) + ")";
}

class reproduce_listener : public ::testing::EmptyTestEventListener {
 public:
  reproduce_listener(std::string program, std::string launcher, std::string setting)
      : program_(std::move(program)), launcher_(std::move(launcher)), setting_(std::move(setting)) {}

  void OnTestStart(const ::testing::TestInfo&) override {
    std::lock_guard lock(current().m);
    current().seeds.clear();
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!info.result()->Failed()) return;
    std::string command;
    for (const std::string& v : heddle_environment()) command += v + " ";
    if (!launcher_.empty()) command += launcher_ + " ";
    command += program_ + " --gtest_filter=" + info.test_suite_name() + "." + info.name();
    const auto* unit = ::testing::UnitTest::GetInstance();
    if (GTEST_FLAG_GET(shuffle))
      command += " --gtest_shuffle --gtest_random_seed=" + std::to_string(unit->random_seed());
    std::printf("[ REPRODUCE ] %s\n", command.c_str());
    std::printf("[ REPRODUCE ] build: %s; workers: %s\n", build_description().c_str(), workers().c_str());
    if (!setting_.empty()) std::printf("[ REPRODUCE ] setting: %s\n", setting_.c_str());
    std::lock_guard lock(current().m);
    if (!current().seeds.empty()) {
      std::string line;
      for (const std::string& s : current().seeds) line += " " + s;
      std::printf("[ REPRODUCE ] seeds:%s (HEDDLE_TEST_SEED=N reruns every seed as N)\n", line.c_str());
    }
    std::fflush(stdout);
  }

 private:
  std::string program_;
  std::string launcher_;
  std::string setting_;
};

}  // namespace

std::uint64_t seed(const char* name, std::uint64_t fixed) {
  std::uint64_t s = fixed;
  if (const char* v = std::getenv("HEDDLE_TEST_SEED"); v && *v) {
    char* end = nullptr;
    const unsigned long long parsed = std::strtoull(v, &end, 10);
    if (end && *end == '\0') {
      s = parsed;
    } else {
      std::fprintf(stderr, "HEDDLE_TEST_SEED='%s' is not a decimal number: seed %s keeps %llu\n", v, name,
                   static_cast<unsigned long long>(fixed));
    }
  }
  const std::string entry = std::string(name) + "=" + std::to_string(s);
  std::lock_guard lock(current().m);
  auto& seeds = current().seeds;
  if (std::find(seeds.begin(), seeds.end(), entry) == seeds.end()) seeds.push_back(entry);
  return s;
}

void install_reproduce_listener(const char* argv0, const std::string& launcher, const std::string& setting) {
  ::testing::UnitTest::GetInstance()->listeners().Append(new reproduce_listener(argv0 ? argv0 : "the test program",
                                                                                launcher, setting));
}

}  // namespace heddle_test
