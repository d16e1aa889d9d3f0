// A benchmark suite: runs its variants, prints its tables, and adds its rows and ratios to the report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace heddle::bench {

struct suite {
  std::string name;
  std::string summary;
  // Fills report["suites"][name] and report["ratios"]; prints to stdout.
  std::function<void(const options&, nlohmann::json& report)> run;
};

const std::vector<suite>& all_suites();

}  // namespace heddle::bench
