// SPDX-License-Identifier: Apache-2.0
// The algorithms suite: heddle's parallel algorithms against oneTBB's, OpenMP's and serial code, one
// experiment after another (experiment.hpp), all in this process.
#include <algorithm>
#include <cstdio>
#include <tuple>

#include "experiment.hpp"
#include "registry.hpp"

namespace heddle::bench::algorithms {

namespace {

std::vector<experiment>& experiments() {
  static std::vector<experiment> list;  // filled by the registrations, before main
  return list;
}

void run(const options& opt, nlohmann::json& report) {
  const auto list = all_experiments();
  if (list.empty()) throw std::runtime_error("algorithms: no experiment is registered");
  for (const auto& e : list) e.run(opt, report);
}

const registration reg{
    {"algorithms", 60,
     "parallel algorithms: for over a 2-D range, reduce, deterministic reduce, scan, sort, pipeline, "
     "per-worker state; heddle against oneTBB, OpenMP and serial",
     &run}};

}  // namespace

experiment_registration::experiment_registration(experiment e) { experiments().push_back(std::move(e)); }

std::vector<experiment> all_experiments() {
  auto list = experiments();
  std::sort(list.begin(), list.end(), [](const experiment& a, const experiment& b) {
    return std::tie(a.order, a.name) < std::tie(b.order, b.name);
  });
  return list;
}

}  // namespace heddle::bench::algorithms
