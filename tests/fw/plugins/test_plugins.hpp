// SPDX-License-Identifier: Apache-2.0
// What the test plugins and plugin_loader_test share: the names of the types they register, the
// values the producer makes for an event (so that the test checks them), and a log of library
// loads (so that the test sees which libraries a loader opened, caches included).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace fw_test_plugins {

// The good library (good.cpp) registers both; the duplicate library (duplicate.cpp) registers the
// producer's name too.
inline constexpr const char* producer_type = "fw_test_plugins::ValuesProducer";
inline constexpr const char* analyzer_type = "fw_test_plugins::ValuesChecker";
// The product of event `event`: 1 + event % 5 values, each a function of the event and its index.
inline std::vector<double> values_for(std::uint64_t event) {
  std::vector<double> v(1 + event % 5);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sqrt(double(event) + 1.0) * double(i + 1);
  return v;
}

// Every load of a test plugin appends its name and ';' to this environment variable (the process's,
// which outlives the libraries): the constructors of a library run each time it is loaded anew.
inline constexpr const char* load_log_variable = "HEDDLE_FW_TEST_PLUGIN_LOADS";
inline bool note_load(const char* library) {
  const char* old = std::getenv(load_log_variable);
  const std::string log = std::string(old ? old : "") + library + ";";
  return ::setenv(load_log_variable, log.c_str(), 1) == 0;
}

}  // namespace fw_test_plugins
