// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace heddle::bench::blocking {

[[gnu::noinline]] std::uint64_t spin_work(std::uint64_t iters, std::uint64_t seed) {
  std::uint64_t x = seed | 1;
  for (std::uint64_t i = 0; i < iters; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

namespace {
std::atomic<std::uint64_t> calibration_sink{0};
}  // namespace

double calibrate_iters_per_us() {
  // ~5 ms a run once warmed up; the fastest of 15 is the rate of an undisturbed core.
  std::uint64_t iters = 1 << 16;
  double best_us = 0;
  std::uint64_t sink = 0;
  for (;;) {  // grow until one run takes at least 1 ms, so the clock's resolution does not matter
    const auto t0 = clock::now();
    sink += spin_work(iters, 7);
    const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count();
    if (us >= 1000) break;
    iters *= 2;
  }
  iters *= 4;
  for (int r = 0; r < 15; ++r) {
    const auto t0 = clock::now();
    sink += spin_work(iters, 11 + r);
    const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count();
    if (r == 0 || us < best_us) best_us = us;
  }
  calibration_sink.store(sink, std::memory_order_relaxed);  // the runs' results are used: none is left out
  return double(iters) / best_us;
}

params make_params(unsigned threads, double delay_s, double compute_s, double iters_per_us) {
  params p;
  p.threads = threads;
  p.compute_chains = 16 * threads;
  const double task_us = compute_s * 1e6 * threads / (double(p.compute_chains) * p.compute_length);
  p.compute_iters = std::max<std::uint64_t>(100, std::uint64_t(std::llround(task_us * iters_per_us)));
  p.light_iters = std::max<std::uint64_t>(1, p.compute_iters / 100);
  p.delay = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(delay_s));
  return p;
}

run_record::run_record(const params& p)
    : p_(p),
      compute_(new chain[p.compute_chains]),
      comm_(new chain[p.comm_chains]),
      light_start_ns_(new std::atomic<std::int64_t>[std::size_t(p.comm_chains) * p.comm_length]),
      chains_left_(p.compute_chains + p.comm_chains) {
  for (std::size_t i = 0; i < std::size_t(p.comm_chains) * p.comm_length; ++i)
    light_start_ns_[i].store(-1, std::memory_order_relaxed);
}

void run_record::compute(unsigned c, unsigned k) {
  chain& ch = compute_[c];
  const unsigned before = ch.started.fetch_add(1, std::memory_order_relaxed);
  const unsigned done = ch.finished.load(std::memory_order_acquire);
  if (before != k || done != k)
    fail("compute task " + std::to_string(k) + " of chain " + std::to_string(c) + " started after " +
         std::to_string(before) + " starts and " + std::to_string(done) + " finished tasks of its chain");
  sink_.fetch_xor(spin_work(p_.compute_iters, std::uint64_t(c) << 8 | k), std::memory_order_relaxed);
  ch.finished.store(k + 1, std::memory_order_release);
  if (k + 1 == p_.compute_length) chain_finished();
}

clock::time_point run_record::light_begin(unsigned c, unsigned i) {
  const auto now = clock::now();
  chain& ch = comm_[c];
  const unsigned before = ch.started.fetch_add(1, std::memory_order_relaxed);
  const unsigned done = ch.finished.load(std::memory_order_acquire);
  if (before != i || done != i)
    fail("light task " + std::to_string(i) + " of chain " + std::to_string(c) + " started after " +
         std::to_string(before) + " starts and " + std::to_string(done) + " finished tasks of its chain");
  light_start_ns_[std::size_t(c) * p_.comm_length + i].store(now.time_since_epoch().count(), std::memory_order_relaxed);
  return now + p_.delay;
}

void run_record::light_work(unsigned c, unsigned i) {
  sink_.fetch_xor(spin_work(p_.light_iters, std::uint64_t(1000 + c) << 8 | i), std::memory_order_relaxed);
}

void run_record::light_end(unsigned c, unsigned i) {
  comm_[c].finished.store(i + 1, std::memory_order_release);
  if (i + 1 == p_.comm_length) chain_finished();
}

clock::time_point run_record::allowed_start(unsigned c, unsigned i) const {
  const std::int64_t pred = light_start_ns_[std::size_t(c) * p_.comm_length + i - 1].load(std::memory_order_relaxed);
  return clock::time_point(clock::duration(pred)) + p_.delay;
}

void run_record::fail(const std::string& what) {
  std::lock_guard lock(m_);
  if (failures_.size() < 16) failures_.push_back(what);
}

void run_record::abandon_chain() { chain_finished(); }

void run_record::chain_finished() {
  std::lock_guard lock(m_);
  if (chains_left_ > 0 && --chains_left_ == 0) done_.notify_all();
}

bool run_record::wait(clock::duration timeout) {
  std::unique_lock lock(m_);
  return done_.wait_for(lock, timeout, [&] { return chains_left_ == 0; });
}

unsigned run_record::chains_left() const {
  std::lock_guard lock(m_);
  return chains_left_;
}

void run_record::check(const std::string& who, bool delays) const {
  {
    std::lock_guard lock(m_);
    if (!failures_.empty()) {
      std::string msg = who + ": " + failures_.front();
      if (failures_.size() > 1) msg += " (and " + std::to_string(failures_.size() - 1) + " more failures)";
      throw std::runtime_error(msg);
    }
  }
  for (unsigned c = 0; c < p_.compute_chains; ++c) {
    const unsigned s = compute_[c].started.load(), f = compute_[c].finished.load();
    if (s != p_.compute_length || f != p_.compute_length)
      throw std::runtime_error(who + ": compute chain " + std::to_string(c) + " had " + std::to_string(s) +
                               " task starts and " + std::to_string(f) + " finished tasks, expected " +
                               std::to_string(p_.compute_length));
  }
  for (unsigned c = 0; c < p_.comm_chains; ++c) {
    const unsigned s = comm_[c].started.load(), f = comm_[c].finished.load();
    if (s != p_.comm_length || f != p_.comm_length)
      throw std::runtime_error(who + ": communication chain " + std::to_string(c) + " had " + std::to_string(s) +
                               " light task starts and " + std::to_string(f) + " finished, expected " +
                               std::to_string(p_.comm_length));
  }
  if (!delays) return;
  for (unsigned c = 0; c < p_.comm_chains; ++c)
    for (unsigned i = 1; i < p_.comm_length; ++i) {
      const std::int64_t start = light_start_ns_[std::size_t(c) * p_.comm_length + i].load();
      const std::int64_t allowed = allowed_start(c, i).time_since_epoch().count();
      if (start < allowed)
        throw std::runtime_error(who + ": light task " + std::to_string(i) + " of chain " + std::to_string(c) +
                                 " started " + std::to_string(allowed - start) +
                                 " ns before its predecessor's start + delay (a timer fired early)");
    }
}

std::vector<double> run_record::latencies_ns() const {
  std::vector<double> v;
  v.reserve(p_.latency_samples());
  for (unsigned c = 0; c < p_.comm_chains; ++c)
    for (unsigned i = 1; i < p_.comm_length; ++i) {
      const std::int64_t start = light_start_ns_[std::size_t(c) * p_.comm_length + i].load();
      v.push_back(double(start - allowed_start(c, i).time_since_epoch().count()));
    }
  return v;
}

}  // namespace heddle::bench::blocking
