#include "report.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

namespace heddle::bench {

nlohmann::json new_report() {
  return {{"machine", machine_json()}, {"suites", nlohmann::json::object()}, {"ratios", nlohmann::json::object()}};
}

nlohmann::json machine_json() {
  std::string model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 1);
      model.erase(0, model.find_first_not_of(" \t"));
      break;
    }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"cores", std::thread::hardware_concurrency()}, {"cpu", model}, {"date", date}};
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

void add_ratio(nlohmann::json& report, const std::string& name, double value, const std::string& meaning) {
  report["ratios"][name] = value;
  std::printf("%s = %.3f   (%s)\n", name.c_str(), value, meaning.c_str());
}

}  // namespace heddle::bench
