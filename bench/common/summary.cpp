// SPDX-License-Identifier: Apache-2.0
#include "summary.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

namespace heddle::bench {

namespace {

// Ratios near 1 need three decimals to show a margin of a few per mille; larger figures (ns,
// bytes) fewer. The interval is written with its value's decimals.
int decimals_for(double x) {
  const double a = x < 0 ? -x : x;
  return a >= 1000 ? 0 : a >= 10 ? 1 : 3;
}

std::string number(const nlohmann::json& v, int decimals) {
  if (!v.is_number()) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", decimals, v.get<double>());
  return b;
}

std::string figure_cell(const nlohmann::json& f) {
  const auto& v = f.at("value");
  const int d = v.is_number() ? decimals_for(v.get<double>()) : 3;
  std::string s = number(v, d);
  if (f.contains("lo") && f.contains("hi")) s += " (" + number(f["lo"], d) + "–" + number(f["hi"], d) + ")";
  return s;
}

}  // namespace

std::string summary_table(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw std::runtime_error("summary: " + dir.string() + " is not a folder of recorded results");
  std::vector<std::filesystem::path> files;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("summary: no recorded results (*.json) in " + dir.string());

  std::string out = "| suite | figure | value (95 % interval) | target | verdict | machine | date | commit |\n"
                    "|---|---|---:|---|---|---|---|---|\n";
  for (auto& path : files) {
    nlohmann::json r;
    try {
      std::ifstream in(path);
      if (!in) throw std::runtime_error("cannot be read");
      r = nlohmann::json::parse(in);
      const auto& p = r.at("provenance");
      r.at("suites");  // a recorded result has its suites' rows
      // The suite heddle-bench ran: the file's name up to its first dot (<suite>.<machine>.json);
      // one suite may record several tables under "suites" (algorithms: one per experiment).
      const std::string file = path.filename().string();
      const std::string suites = file.substr(0, file.find('.'));
      std::string commit = p.at("commit").get<std::string>().substr(0, 7);
      if (p.at("dirty").is_boolean() && p["dirty"].get<bool>()) commit += " (dirty)";
      const std::string date = p.at("date").get<std::string>().substr(0, 10);
      for (auto& [name, f] : r.at("ratios").items()) {
        if (!f.is_object()) throw std::runtime_error("ratio " + name + " is not an object (an old report?)");
        if (!f.contains("target")) continue;
        out += "| " + suites + " | `" + name + "` | " + figure_cell(f) + " | " + f.at("target").get<std::string>() +
               " | " + (f.at("verdict") == "missed" ? "**missed**" : f.at("verdict").get<std::string>()) + " | " +
               p.at("machine").get<std::string>() + " | " + date + " | " + commit + " |\n";
      }
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("summary: " + path.string() + ": not a recorded result: " + e.what());
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("summary: " + path.string() + ": " + e.what());
    }
  }
  return out;
}

}  // namespace heddle::bench
