// The benchmark harness: runs several variants interleaved (A B C A B C ...), so that the phases of
// a noisy VM hit every variant alike, and reports medians with min–max.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heddle::bench {

struct options {
  bool quick = false;
  bool full = false;
  std::vector<unsigned> threads;  // empty: the suite's default
  int reps = 5;
};

// One thing to time. run() does the work once and returns its wall time in seconds; it throws
// std::runtime_error if the result is wrong.
struct variant {
  std::string name;
  unsigned threads = 1;
  std::function<double()> run;
};

struct result {
  std::string name;
  unsigned threads = 1;
  std::vector<double> samples;  // seconds
  double median() const;
  double min() const;
  double max() const;
};

// One warm-up run of each variant, then `reps` interleaved rounds.
std::vector<result> run_interleaved(std::vector<variant>& variants, int reps);

const result& find(const std::vector<result>& rs, const std::string& name, unsigned threads);

// A markdown table: variant, threads, median ms, min–max ms, and the ratio to a reference variant
// with the same thread count (empty: no ratio column).
std::string markdown_table(const std::vector<result>& rs, const std::string& reference);

nlohmann::json to_json(const std::vector<result>& rs);
nlohmann::json machine_json();

}  // namespace heddle::bench
