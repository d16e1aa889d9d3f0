// SPDX-License-Identifier: Apache-2.0
// One experiment of the algorithms suite. Each file registers its own:
//   const experiment_registration reg{{"sort", 50, &run_sort}};
// and suite.cpp runs them all, by `order` (lowest first), then name.
// An experiment prints its tables, adds its suite entry and its ratios (`sort_int_vs_tbb`, and the
// `_1t_`/`_4t_` forms) to the report (report.hpp), and throws std::runtime_error when any variant's
// result differs from the serial one.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace heddle::bench::algorithms {

struct experiment {
  std::string name;
  int order = 0;
  void (*run)(const options&, nlohmann::json& report) = nullptr;
};

struct experiment_registration {
  explicit experiment_registration(experiment e);
};

// Every registered experiment, by order, then name.
std::vector<experiment> all_experiments();

}  // namespace heddle::bench::algorithms
