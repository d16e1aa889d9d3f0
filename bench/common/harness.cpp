#include "harness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace heddle::bench {

namespace {
std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

double result::median() const {
  auto s = sorted(samples);
  const auto n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}
double result::min() const { return *std::min_element(samples.begin(), samples.end()); }
double result::max() const { return *std::max_element(samples.begin(), samples.end()); }

std::vector<result> run_interleaved(std::vector<variant>& variants, int reps) {
  std::vector<result> rs;
  for (auto& v : variants) {
    v.run();  // warm-up: pools, caches, thread start-up
    rs.push_back({v.name, v.threads, {}});
  }
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < variants.size(); ++i) rs[i].samples.push_back(variants[i].run());
  return rs;
}

const result& find(const std::vector<result>& rs, const std::string& name, unsigned threads) {
  for (auto& r : rs)
    if (r.name == name && r.threads == threads) return r;
  throw std::logic_error("heddle-bench: no result for " + name + " at " + std::to_string(threads) + " threads");
}

std::string markdown_table(const std::vector<result>& rs, const std::string& reference) {
  std::string out = "| variant | threads | median ms | min–max ms |";
  out += reference.empty() ? "\n|---|---:|---:|---:|\n" : " vs " + reference + " |\n|---|---:|---:|---:|---:|\n";
  char line[256];
  for (auto& r : rs) {
    std::snprintf(line, sizeof line, "| %s | %u | %.2f | %.2f–%.2f |", r.name.c_str(), r.threads, r.median() * 1e3,
                  r.min() * 1e3, r.max() * 1e3);
    out += line;
    if (!reference.empty()) {
      std::snprintf(line, sizeof line, " %.2f |", r.median() / find(rs, reference, r.threads).median());
      out += line;
    }
    out += "\n";
  }
  return out;
}

nlohmann::json to_json(const std::vector<result>& rs) {
  auto rows = nlohmann::json::array();
  for (auto& r : rs)
    rows.push_back({{"variant", r.name},
                    {"threads", r.threads},
                    {"median_s", r.median()},
                    {"min_s", r.min()},
                    {"max_s", r.max()},
                    {"samples_s", r.samples}});
  return rows;
}

nlohmann::json machine_json() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"cores", std::thread::hardware_concurrency()}, {"cpu", model}, {"date", date}};
}

}  // namespace heddle::bench
