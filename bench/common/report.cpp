// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include <cmath>
#include <cstdio>

#include "provenance.hpp"

namespace heddle::bench {

std::string target::text() const {
  char b[48];
  std::snprintf(b, sizeof b, "%s %g", dir == direction::at_most ? "<=" : ">=", bound);
  return b;
}

std::string verdict(const estimate& e, const target& t) {
  if (e.rounds == 1) return "not shown";
  const bool at_most = t.dir == target::direction::at_most;
  const bool all_in = at_most ? e.hi <= t.bound : e.lo >= t.bound;
  const bool all_out = at_most ? e.lo > t.bound : e.hi < t.bound;
  return all_in ? "met" : all_out ? "missed" : "not shown";
}

nlohmann::json new_report() {
  return {
      {"provenance", provenance_json()}, {"suites", nlohmann::json::object()}, {"ratios", nlohmann::json::object()}};
}

void add_suite(nlohmann::json& report, const std::string& suite, const std::vector<result>& rs, nlohmann::json extra) {
  auto rows = nlohmann::json::array();
  for (auto& r : rs) {
    nlohmann::json row{{"variant", r.name}, {"threads", r.threads}};
    if (!r.config.empty()) row["config"] = r.config;
    row["median"] = r.median();
    row["min"] = r.min();
    row["max"] = r.max();
    row["samples"] = r.samples;
    rows.push_back(std::move(row));
  }
  extra["unit"] = "s";
  extra["rows"] = std::move(rows);
  report["suites"][suite] = std::move(extra);
}

void add_figure(nlohmann::json& report, const std::string& name, const estimate& e, const std::string& meaning,
                std::optional<target> t) {
  // JSON has no NaN or infinity: a figure the runs cannot form (an overhead over a zero difference)
  // is written as null, and has no verdict.
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json f{{"value", number(e.value)}, {"meaning", meaning}};
  if (e.rounds > 0) f["rounds"] = e.rounds;
  if (e.has_interval()) f["lo"] = number(e.lo), f["hi"] = number(e.hi);
  std::string line = name + " = ";
  char b[96];
  std::snprintf(b, sizeof b, "%.3f", e.value);
  line += b;
  if (e.has_interval()) std::snprintf(b, sizeof b, " (%.3f-%.3f)", e.lo, e.hi), line += b;
  if (t) {
    f["target"] = t->text();
    const bool formed = std::isfinite(e.value) && std::isfinite(e.lo) && std::isfinite(e.hi);
    f["verdict"] = formed ? verdict(e, *t) : "not shown";
    line += "   target " + t->text() + ": " + f["verdict"].get<std::string>();
  }
  report["ratios"][name] = std::move(f);
  std::printf("%s   (%s)\n", line.c_str(), meaning.c_str());
}

}  // namespace heddle::bench
