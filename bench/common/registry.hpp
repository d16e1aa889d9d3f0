// SPDX-License-Identifier: Apache-2.0
// The suites heddle-bench knows. Each suite registers itself from its own folder:
//   static const heddle::bench::registration reg{{"spawn", 0, "fib(n) with a task per call", &run}};
// and its CMake target is an OBJECT library (heddle_bench_suite() in bench/CMakeLists.txt), so that
// the registration is always linked in.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace heddle::bench {

struct suite {
  std::string name;
  int order = 0;        // place in `heddle-bench all` and in the lists, lowest first
  std::string summary;  // one line for --help
  // Runs the variants, prints the suite's tables and ratios to stdout, and fills
  // report["suites"][name] and report["ratios"] (report.hpp). Throws std::runtime_error when a
  // result is wrong.
  std::function<void(const options&, nlohmann::json& report)> run;
};

struct registration {
  explicit registration(suite s);
};

// Every registered suite, by `order`, then name.
std::vector<suite> all_suites();

}  // namespace heddle::bench
