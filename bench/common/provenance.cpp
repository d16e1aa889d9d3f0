// SPDX-License-Identifier: Apache-2.0
#include "provenance.hpp"

#include <sys/utsname.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

#include "build_info.hpp"

namespace heddle::bench {

namespace {

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      auto model = line.substr(line.find(':') + 1);
      model.erase(0, model.find_first_not_of(" \t"));
      return model;
    }
  return "unknown";
}

// The first line `command` prints, without its newline; "" when it fails or prints nothing.
std::string first_line_of(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(command.c_str(), "r"), pclose);
  if (!p) return "";
  std::array<char, 256> line{};
  if (!std::fgets(line.data(), line.size(), p.get())) return "";
  std::string s = line.data();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::string machine_name(const std::string& cpu_model, unsigned cores) {
  std::string name;
  for (char c : cpu_model) {
    if (std::isalnum(static_cast<unsigned char>(c))) name += char(std::tolower(static_cast<unsigned char>(c)));
    else if (!name.empty() && name.back() != '-') name += '-';
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  return (name.empty() ? std::string("unknown") : name) + "-" + std::to_string(cores) + "c";
}

nlohmann::json provenance_json() {
  const std::string git = std::string("git -C '") + HEDDLE_BENCH_SOURCE_DIR + "' ";
  std::string commit = first_line_of(git + "rev-parse HEAD 2>/dev/null");
  nlohmann::json dirty = nullptr;  // unknown
  if (commit.empty()) commit = "unknown";
  // The recorded results are the runs' output, not their input: a run that replaces one (--record
  // bench/recorded) leaves the next suite's tree as clean as it found it.
  else
    dirty = !first_line_of(git + "status --porcelain --untracked-files=no -- . ':!bench/recorded' 2>/dev/null").empty();

  utsname u{};
  std::string kernel = uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : "unknown";
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string cpu = cpu_model();
  const unsigned cores = std::thread::hardware_concurrency();
  return {{"commit", commit},
          {"dirty", dirty},
          {"compiler", HEDDLE_BENCH_COMPILER},
          {"build_type", HEDDLE_BENCH_BUILD_TYPE},
          {"flags", HEDDLE_BENCH_FLAGS},
          {"versions",
           {{"onetbb", HEDDLE_BENCH_TBB_VERSION},
            {"openmpi", HEDDLE_BENCH_MPI_VERSION},
            {"fastjet", HEDDLE_BENCH_FASTJET_VERSION},
            {"hdf5", HEDDLE_BENCH_HDF5_VERSION}}},
          {"cpu", cpu},
          {"cores", cores},
          {"kernel", kernel},
          {"machine", machine_name(cpu, cores)},
          {"date", date}};
}

}  // namespace heddle::bench
