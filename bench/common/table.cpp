// SPDX-License-Identifier: Apache-2.0
#include "table.hpp"

#include <algorithm>
#include <cstdio>

namespace heddle::bench {

namespace {
const result* lookup(const std::vector<result>& rs, const std::string& name, unsigned threads,
                     const std::string& config) {
  for (auto& r : rs)
    if (r.name == name && r.threads == threads && r.config == config) return &r;
  return nullptr;
}
}  // namespace

std::string markdown_table(const std::vector<result>& rs, const std::string& reference) {
  const bool configs = std::any_of(rs.begin(), rs.end(), [](auto& r) { return !r.config.empty(); });
  // µs where ms would print a row as 0.00 or 0.01 (a round trip beside a busy target's millisecond).
  const bool micro = std::any_of(rs.begin(), rs.end(), [](auto& r) { return r.median() < 1e-5; }) ||
                     std::all_of(rs.begin(), rs.end(), [](auto& r) { return r.median() < 1e-3; });
  const double scale = micro ? 1e6 : 1e3;
  const char* unit = micro ? "µs" : "ms";

  std::string out = "| variant | threads |";
  std::string rule = "|---|---:|";
  if (configs) out += " config |", rule += "---|";
  out += std::string(" median ") + unit + " | min–max " + unit + " |";
  rule += "---:|---:|";
  if (!reference.empty()) out += " vs " + reference + " |", rule += "---:|";
  out += "\n" + rule + "\n";

  char cell[160];
  for (auto& r : rs) {
    out += "| " + r.name + " | " + std::to_string(r.threads) + " |";
    if (configs) out += " " + r.config + " |";
    std::snprintf(cell, sizeof cell, " %.2f | %.2f–%.2f |", r.median() * scale, r.min() * scale, r.max() * scale);
    out += cell;
    if (!reference.empty()) {
      if (auto* ref = lookup(rs, reference, r.threads, r.config)) {
        std::snprintf(cell, sizeof cell, " %.2f |", r.median() / ref->median());
        out += cell;
      } else {
        out += " |";
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace heddle::bench
