// SPDX-License-Identifier: Apache-2.0
// heddle-fw's output: the progress bar, the report (text and JSON), the timeline CSV.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "heddle/fw.hpp"
#include "study.hpp"

namespace heddle::fw::tool {

// What was run, for the report's header.
struct run_description {
  std::string config;
  std::string processor;  // "threaded" | "single-threaded"
  study::timing_options timing;
  const run_options& options;
  const process& proc;
};

// A one-line bar on stderr, redrawn at most every 100 ms; nothing when `enabled` is false.
class progress_bar {
 public:
  progress_bar(std::uint64_t total, bool enabled) : total_(total), enabled_(enabled) {}
  void show(std::uint64_t done);
  void clear();

 private:
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

void print_report(std::FILE* out, const run_description& what, const run_report& r);
nlohmann::json report_json(const run_description& what, const run_report& r);
void write_timeline(std::ostream& out, const process& p, const timeline& t);
std::string hex(std::uint64_t v);

}  // namespace heddle::fw::tool
