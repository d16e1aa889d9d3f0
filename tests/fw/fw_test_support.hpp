// Shared helpers of the framework's tests: the configurations by path (the study's, and the
// project's own), and modules that count and record what the framework does with them.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <heddle/fw.hpp>
#include <memory>
#include <string>

#include "test_support.hpp"

namespace fw_test {

// The CMS study's configurations lie beside the repository (HEDDLE_CMS_DATA, from
// tests/fw/CMakeLists.txt), not in it: a clone of the project alone lacks them, so a test that
// reads one starts with FW_TEST_NEEDS_CMS and skips without it.
inline std::string cms(const std::string& name) { return std::string(HEDDLE_CMS_DATA) + "/" + name; }
// The project's own small configurations (tests/fw/configs/): what the framework's own behaviour
// is tested on, so that those tests run everywhere.
inline std::string own(const std::string& name) { return std::string(HEDDLE_FW_CONFIGS) + "/" + name; }

// Skips the current test, saying why, when the study's file `name` (under HEDDLE_CMS_DATA) is
// absent. A macro: GTEST_SKIP() returns from the test function itself.
#define FW_TEST_NEEDS_CMS(name)                                                                              \
  do {                                                                                                       \
    const std::string fw_test_file_ = fw_test::cms(name);                                                    \
    if (!std::filesystem::exists(fw_test_file_))                                                             \
      GTEST_SKIP() << fw_test_file_                                                                          \
                   << " is absent: the CMS study's configurations are not part of the repository (CI and " \
                      "developers have them in ../shared/data/cms beside it; -DHEDDLE_CMS_DATA=DIR names "  \
                      "another folder)";                                                                     \
  } while (0)

inline const char* const hipileup = "reco_hipileup_5_2_0_busywait_perfectIO.json";
inline const char* const minbias = "reco_minbias_busywait.json";

// A module whose produce() is a given function; counts its calls.
class probe final : public heddle::fw::module {
 public:
  explicit probe(std::function<std::int64_t(const heddle::fw::event_view&)> f) : f_(std::move(f)) {}
  std::int64_t produce(const heddle::fw::event_view& e) override {
    calls.fetch_add(1, std::memory_order_relaxed);
    return f_(e);
  }
  std::atomic<long> calls{0};

 private:
  std::function<std::int64_t(const heddle::fw::event_view&)> f_;
};

// Adds a probe module to `p`; returns it (owned by the process).
inline probe* add_probe(heddle::fw::process& p, heddle::fw::module_decl d,
                        std::function<std::int64_t(const heddle::fw::event_view&)> f) {
  auto m = std::make_unique<probe>(std::move(f));
  probe* raw = m.get();
  p.add_module(std::move(d), std::move(m));
  return raw;
}

inline heddle::fw::module_decl decl(std::string label, heddle::fw::module_role role = heddle::fw::module_role::producer,
                                    std::vector<std::string> inputs = {},
                                    heddle::fw::thread_type t = heddle::fw::thread_type::safe_between_instances) {
  heddle::fw::module_decl d;
  d.label = std::move(label);
  d.role = role;
  d.threads = t;
  for (auto& i : inputs) d.inputs.push_back({std::move(i), ""});
  return d;
}

inline heddle::fw::run_options options(std::uint64_t events, std::uint64_t in_flight, unsigned threads = 2) {
  heddle::fw::run_options o;
  o.events = events;
  o.events_in_flight = in_flight;
  o.threads = threads;
  return o;
}

}  // namespace fw_test
