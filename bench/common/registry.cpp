// SPDX-License-Identifier: Apache-2.0
#include "registry.hpp"

#include <algorithm>

namespace heddle::bench {

namespace {
// A function-local static: registrations run during static initialisation, in no fixed order.
std::vector<suite>& registered() {
  static std::vector<suite> suites;
  return suites;
}
}  // namespace

registration::registration(suite s) { registered().push_back(std::move(s)); }

std::vector<suite> all_suites() {
  auto suites = registered();
  std::sort(suites.begin(), suites.end(),
            [](auto& a, auto& b) { return a.order != b.order ? a.order < b.order : a.name < b.name; });
  return suites;
}

}  // namespace heddle::bench
