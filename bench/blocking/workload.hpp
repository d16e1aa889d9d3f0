// SPDX-License-Identifier: Apache-2.0
// The blocking suite's workload: Table I of "Improving Blocking Operation Support in Intel TBB"
// (Dokulil, Benkner, Sandrieser). Compute chains of CPU-bound tasks keep every worker busy while a
// few communication chains of light tasks each wait a fixed delay after their predecessor started
// (what a program waiting on a message or a device would do). Every runtime runs the same
// workload object; only the way the waiting is done differs (heddle.cpp, tbb.cpp).
//
// The record of one run (run_record) is written by the tasks and checked afterwards: every task ran
// exactly once, in chain order, and no light task started before it was allowed to.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace heddle::bench::blocking {

using clock = std::chrono::steady_clock;

// The CPU-bound work: `iters` rounds of xorshift64, a serial dependency chain that the compiler can
// neither vectorise nor shorten. A fixed amount of arithmetic, not a clock-polling spin, so that
// losing the core to another thread (a sleeping task's wake-up, a service thread) costs time.
std::uint64_t spin_work(std::uint64_t iters, std::uint64_t seed);

// Rounds of spin_work per microsecond on one thread: the fastest of several timed runs (the least
// disturbed by other threads on the machine).
double calibrate_iters_per_us();

struct params {
  unsigned threads = 1;
  unsigned compute_chains = 16;  // 16 per worker thread
  unsigned compute_length = 8;   // tasks per compute chain
  unsigned comm_chains = 4;
  unsigned comm_length = 4;         // light tasks per communication chain
  std::uint64_t compute_iters = 0;  // spin_work rounds of one compute task
  std::uint64_t light_iters = 0;    // one light task: 1 % of a compute task
  clock::duration delay{};          // a light task may start this long after its predecessor started

  // The compute part alone at `threads` threads, from the calibration.
  double compute_seconds(double iters_per_us) const {
    return double(compute_chains) * compute_length * double(compute_iters) / iters_per_us * 1e-6 / threads;
  }
  std::size_t latency_samples() const { return std::size_t(comm_chains) * (comm_length - 1); }
};

// `threads` workers, `delay` between light tasks and compute tasks sized so that the compute part
// takes `compute_s` at `threads` threads.
params make_params(unsigned threads, double delay_s, double compute_s, double iters_per_us);

// What one run of one variant leaves behind, filled in by the tasks. A fresh one per run.
class run_record {
 public:
  explicit run_record(const params& p);

  const params& p() const { return p_; }

  // Compute task k of chain c: checks its place in the chain, does the work; the last one of a
  // chain counts the chain as finished.
  void compute(unsigned c, unsigned k);

  // Light task i of communication chain c. begin() records its start (steady_clock) and checks that
  // its predecessor has finished; work() is the light work; end() marks it finished (the last of a
  // chain counts the chain as finished). begin() returns the earliest start of its successor.
  clock::time_point light_begin(unsigned c, unsigned i);
  void light_work(unsigned c, unsigned i);
  void light_end(unsigned c, unsigned i);
  // All three, for runtimes that run a light task as one call.
  clock::time_point light(unsigned c, unsigned i) {
    const auto t = light_begin(c, i);
    light_work(c, i);
    light_end(c, i);
    return t;
  }
  clock::time_point allowed_start(unsigned c, unsigned i) const;  // of light task i (i >= 1)

  // Something went wrong inside a task (an exception, a task out of order): kept for check().
  void fail(const std::string& what);
  // A chain that cannot go on (its task failed) counts as finished, so that wait() returns.
  void abandon_chain();

  // Blocks until every chain has finished; false if `timeout` passed first.
  bool wait(clock::duration timeout);
  unsigned chains_left() const;

  // After the run: throws std::runtime_error naming the first task that did not run exactly once
  // in chain order, any failure, and (if `delays`) any light task that started before its
  // predecessor's start + delay.
  void check(const std::string& who, bool delays) const;
  // Start of light task i minus (start of task i-1 + delay), i >= 1, in ns: comm_chains × (length−1).
  std::vector<double> latencies_ns() const;

 private:
  struct alignas(64) chain {
    std::atomic<unsigned> started{0};
    std::atomic<unsigned> finished{0};
  };
  void chain_finished();

  params p_;
  std::unique_ptr<chain[]> compute_;
  std::unique_ptr<chain[]> comm_;
  std::unique_ptr<std::atomic<std::int64_t>[]> light_start_ns_;  // [c * comm_length + i]
  std::atomic<std::uint64_t> sink_{0};

  mutable std::mutex m_;
  std::condition_variable done_;
  unsigned chains_left_;
  std::vector<std::string> failures_;
};

}  // namespace heddle::bench::blocking
