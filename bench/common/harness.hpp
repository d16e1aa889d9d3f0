// SPDX-License-Identifier: Apache-2.0
// The benchmark harness: runs several variants interleaved (A B C, C A B, ...), so that the fast
// and slow phases of a noisy VM hit every variant alike; reports each variant's median with min–max,
// and every comparison of two variants round by round, as a median with its interval (estimate).
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace heddle::bench {

// What the command line asks of a suite.
struct options {
  bool check = false;             // tiny inputs, one run of each variant: the results are verified, the
                                  // times mean nothing (ctest runs every suite this way)
  bool quick = false;             // small inputs: every suite in well under a minute
  bool full = false;              // paper-sized inputs
  std::vector<unsigned> threads;  // empty: the suite's default
  int reps = 5;                   // interleaved repetitions per variant, at least 5 (1 with check)

  std::vector<unsigned> threads_or(std::vector<unsigned> fallback) const {
    return threads.empty() ? fallback : threads;
  }
  // The input size (or any setting) for the chosen scale: --check, --quick, neither, --full.
  template <class T>
  T pick(T check_value, T quick_value, T standard_value, T full_value) const {
    return check ? check_value : quick ? quick_value : full ? full_value : standard_value;
  }
  // "--check", "--quick", "--full" or "" (the standard sizes): for the suite's heading.
  const char* scale_name() const { return check ? "--check" : quick ? "--quick" : full ? "--full" : ""; }
};

// The thread count of a suite's headline ratios (matmul_vs_tbb, ...): the largest in `threads` that
// does not oversubscribe the machine (std::thread::hardware_concurrency), else the smallest.
unsigned headline_threads(const std::vector<unsigned>& threads);

// One thing to time. run() does the work once and returns its wall time in seconds; it throws
// std::runtime_error when the result is wrong (heddle-bench then exits with status 1).
struct variant {
  std::string name;  // the runtime and the way it is used: "heddle", "oneTBB task_group"
  unsigned threads = 1;
  std::string config;  // the input or the parameter that varies within a suite; may be empty
  std::function<double()> run;
};

struct result {
  std::string name;
  unsigned threads = 1;
  std::string config;
  std::vector<double> samples;  // seconds, in the order they were taken
  double median() const;
  double min() const;
  double max() const;
};

// The pause before each timed run, in which the threads of the previous run go idle.
inline constexpr std::chrono::milliseconds settle_time{5};

// One warm-up run of each variant (pools, caches, thread start-up), then `reps` rounds in each of
// which every variant runs once, in a shuffled order (a new one each round, the same sequence of
// orders on every run of the program), each after settle_time. Every run checks its result.
std::vector<result> run_interleaved(std::vector<variant>& variants, int reps);

// The result of `name` at `threads` (and `config`); std::logic_error if there is none.
const result& find(const std::vector<result>& rs, const std::string& name, unsigned threads,
                   const std::string& config = {});

// A figure and its 95 % confidence interval. A figure that compares two variants is computed per
// round, from the two samples that round measured (both in the same round of run_interleaved, in
// its shuffled order), and `value` is the median over the rounds; the interval is the percentile
// bootstrap of that median: the rounds resampled with replacement (as many as there are), the
// median taken, 10,000 times, the 2.5th and 97.5th percentiles kept. The generator has a fixed
// seed, so the same rounds give the same interval on every run of the program. With few rounds the
// interval is wide: a margin smaller than the rounds' own spread is not shown by them. A figure
// measured once (bytes a queue, a count) has no interval: `lo` and `hi` equal `value`, and
// `rounds` is 0. One round (--check) has no interval either, and shows nothing.
struct estimate {
  double value = 0, lo = 0, hi = 0;
  int rounds = 0;  // 0: measured once, exactly; else the rounds the median is taken over
  bool has_interval() const { return rounds > 1; }
  static estimate exact(double v) { return {v, v, v, 0}; }
};

// The median of `per_round` with its bootstrap interval (above). std::logic_error when empty.
estimate median_with_interval(std::vector<double> per_round);

// f(a.samples[i], b.samples[i]) for every round i, as an estimate. a and b must come from the same
// run_interleaved call (the same number of rounds); std::logic_error otherwise.
template <class F>
estimate paired(const result& a, const result& b, F f) {
  if (a.samples.size() != b.samples.size() || a.samples.empty())
    throw std::logic_error("heddle-bench: " + a.name + " and " + b.name + " were not measured in the same rounds");
  std::vector<double> per_round(a.samples.size());
  for (std::size_t i = 0; i < per_round.size(); ++i) per_round[i] = f(a.samples[i], b.samples[i]);
  return median_with_interval(std::move(per_round));
}

// a's time over b's, round by round: below 1, a is faster.
inline estimate paired_ratio(const result& a, const result& b) {
  return paired(a, b, [](double x, double y) { return x / y; });
}

// Wall time of f() in seconds; check(value) throws if the value is wrong. The check runs outside
// the timed region.
template <class F, class Check>
double timed(F&& f, Check&& check) {
  const auto t0 = std::chrono::steady_clock::now();
  auto value = f();
  const auto t1 = std::chrono::steady_clock::now();
  check(value);
  return std::chrono::duration<double>(t1 - t0).count();
}

// A check for timed(): the value must equal `expected`.
template <class T>
auto expect_equal(T expected, std::string what) {
  return [expected, what = std::move(what)](const T& got) {
    if (got != expected)
      throw std::runtime_error(what + " computed " + std::to_string(got) + ", expected " + std::to_string(expected));
  };
}

}  // namespace heddle::bench
