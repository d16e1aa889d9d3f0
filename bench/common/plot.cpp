// SPDX-License-Identifier: Apache-2.0
#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

extern char** environ;

namespace heddle::bench {

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
std::string csv_value(const nlohmann::json& v) {
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_null()) return "";
  return v.dump();
}

// DIR/<suite>_<table>.csv: the columns are the keys of the first row, with the suite's name first.
std::filesystem::path write_table(const std::filesystem::path& dir, const std::string& suite, const std::string& table,
                                  const nlohmann::json& rows) {
  auto path = dir / (suite + "_" + table + ".csv");
  std::ofstream csv(path);
  csv << "suite";
  std::vector<std::string> columns;
  if (!rows.empty())
    for (auto& [key, value] : rows.front().items()) columns.push_back(key), csv << ',' << csv_field(key);
  csv << '\n';
  for (auto& row : rows) {
    csv << csv_field(suite);
    for (auto& c : columns) csv << ',' << csv_value(row.value(c, nlohmann::json()));
    csv << '\n';
  }
  if (!csv.flush()) throw std::runtime_error("cannot write " + path.string());
  return path;
}

}  // namespace

std::vector<std::filesystem::path> write_csv(const nlohmann::json& report, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  std::vector<std::filesystem::path> files;
  for (auto& [name, suite] : report.at("suites").items()) {
    auto path = dir / (name + ".csv");
    std::ofstream csv(path);
    csv.precision(9);
    csv << "suite,variant,threads,config,median_s,min_s,max_s\n";
    for (auto& r : suite.at("rows"))
      csv << csv_field(name) << ',' << csv_field(r.at("variant").get<std::string>()) << ','
          << r.at("threads").get<unsigned>() << ',' << csv_field(r.value("config", std::string{})) << ','
          << r.at("median").get<double>() << ',' << r.at("min").get<double>() << ',' << r.at("max").get<double>()
          << '\n';
    if (!csv.flush()) throw std::runtime_error("cannot write " + path.string());
    if (suite.value("plot_rows", true)) files.push_back(std::move(path));
    if (suite.contains("tables"))
      for (auto& [table, rows] : suite["tables"].items()) files.push_back(write_table(dir, name, table, rows));
  }
  return files;
}

void plot_csv(const std::vector<std::filesystem::path>& csvs, const std::filesystem::path& dir) {
  if (csvs.empty()) return;
  auto setting = [](const char* name, const char* fallback) {
    const char* env = std::getenv(name);
    return std::string(env && *env ? env : fallback);
  };
  const std::string python = setting("HEDDLE_BENCH_PYTHON", HEDDLE_BENCH_PYTHON);
  const std::string script = setting("HEDDLE_BENCH_PLOT_SCRIPT", HEDDLE_BENCH_PLOT_SCRIPT);
  std::vector<std::string> args{python, script, "--out", dir.string()};
  for (auto& c : csvs) args.push_back(c.string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid;
  if (int err = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ))
    throw std::runtime_error("cannot start " + python + " for the plots: " + std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waiting for plot.py: ") + std::strerror(errno));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("plot.py failed (" + script + "); the CSVs are in " + dir.string());
}

}  // namespace heddle::bench
