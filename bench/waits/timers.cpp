// SPDX-License-Identifier: Apache-2.0
// Outstanding timers: heddle's timer engine against one thread per wait. Every wait is due at the
// same instant D, a lead time after the first start, so that all are pending when the memory is
// read and the completions measure how fast the waiters drain: from D to the last successor's end.
#include <sys/prctl.h>

#include <heddle/heddle.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "probes.hpp"
#include "tally.hpp"
#include "waits.hpp"

namespace heddle::bench::waits {

namespace {

clock::duration lead_of(double s) {
  return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s));
}

// Timers per start task: the root task spawns n / chunk tasks, which the 2 workers share.
constexpr std::size_t chunk = 1024;

std::string what_failed(std::vector<heddle::future<void>>& futs) {
  std::size_t pending = 0, failed = 0;
  std::string first;
  for (auto& f : futs) {
    if (!f.valid()) continue;
    if (!f.is_ready()) {
      ++pending;
      continue;
    }
    try {
      f.get();
    } catch (const std::exception& e) {
      if (failed++ == 0) first = e.what();
    }
  }
  return std::to_string(pending) + " successor futures not ready, " + std::to_string(failed) + " failed" +
         (first.empty() ? std::string() : " (the first: " + first + ")");
}

}  // namespace

run_result timers_heddle(const timer_params& p) {
  run_result r;
  r.n = p.n;
  tally t(p.n);
  std::vector<heddle::future<void>> futs(p.n);  // the successors' futures, kept to report a failure
  heddle::runtime rt(heddle::runtime_options{.threads = p.workers});
  // The timer engine (its service thread) and the workers' record caches exist before the first
  // snapshot: what is measured is the cost of the waits, not of starting the engine.
  heddle::sleep_until(rt, clock::now()).get();
  rt.task([] {}).get();

  const snapshot before = snapshot::take(heddle::core_detail::depot_slabs());
  const auto t0 = clock::now();
  const auto deadline = t0 + lead_of(p.lead_s);
  auto root = rt.task([&] {
    std::vector<heddle::future<void>> starters;
    starters.reserve(p.n / chunk + 1);
    for (std::size_t lo = 0; lo < p.n; lo += chunk) {
      const std::size_t hi = std::min<std::size_t>(p.n, lo + chunk);
      starters.push_back(heddle::task([&, lo, hi] {
        for (std::size_t i = lo; i < hi; ++i)
          futs[i] = heddle::sleep_until(rt, deadline).then(heddle::strategy::normal, [&t, i] { t.hit(i); });
      }));
    }
    for (auto& s : starters) s.get();
  });
  root.get();
  const auto t1 = clock::now();
  const snapshot after = snapshot::take(heddle::core_detail::depot_slabs());
  r.measured_before_due = clock::now() < deadline;
  const double cpu0 = cpu_seconds();
  const bool finished = t.wait(p.timeout_s);
  const double cpu1 = cpu_seconds();
  if (!finished)
    throw std::runtime_error("heddle timers: " + std::to_string(t.done()) + " of " + std::to_string(p.n) +
                             " successors ran within " + std::to_string(p.timeout_s) + " s of the start; " +
                             what_failed(futs) + "; " + t.check(deadline.time_since_epoch().count()));
  for (auto& f : futs) f.get();  // every successor has run: each future is ready or about to be
  if (const std::string e = t.check(deadline.time_since_epoch().count()); !e.empty())
    throw std::runtime_error("heddle timers: " + e);

  r.start_s = seconds(t1 - t0);
  store_delta(r, before, after);
  r.completion_s = double(t.end_ns() - deadline.time_since_epoch().count()) * 1e-9;
  r.completion_cpu_s = cpu1 - cpu0;
  store_lateness(r, t.start_ns(), deadline.time_since_epoch().count());
  return r;
}

run_result timers_threads(const timer_params& p) {
  raise_thread_limit();
  run_result r;
  r.n = p.n;
  tally t(p.n);
  std::atomic<std::size_t> waiting{0};
  clock::time_point deadline;
  thread_set threads([&](std::size_t i) {
    // The timer slack heddle's timer thread sets too: the kernel may otherwise wake a sleeper up
    // to 50 µs late.
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    waiting.fetch_add(1, std::memory_order_release);
    std::this_thread::sleep_until(deadline);
    t.hit(i);
  });
  threads.reserve(p.n);  // the thread handles, like heddle's futures, are not the waits' memory

  const snapshot before = snapshot::take();
  const auto t0 = clock::now();
  deadline = t0 + lead_of(p.lead_s);
  threads.start(p.n);
  while (waiting.load(std::memory_order_acquire) < p.n) std::this_thread::sleep_for(std::chrono::microseconds(200));
  const auto t1 = clock::now();
  const snapshot after = snapshot::take();
  r.measured_before_due = clock::now() < deadline;
  const double cpu0 = cpu_seconds();
  const bool finished = t.wait(p.timeout_s);
  const double cpu1 = cpu_seconds();
  if (!finished)
    throw std::runtime_error("thread per timer: " + std::to_string(t.done()) + " of " + std::to_string(p.n) +
                             " threads counted within " + std::to_string(p.timeout_s) + " s");
  threads.join();
  if (const std::string e = t.check(deadline.time_since_epoch().count()); !e.empty())
    throw std::runtime_error("thread per timer: " + e);

  r.start_s = seconds(t1 - t0);
  store_delta(r, before, after);
  r.completion_s = double(t.end_ns() - deadline.time_since_epoch().count()) * 1e-9;
  r.completion_cpu_s = cpu1 - cpu0;
  store_lateness(r, t.start_ns(), deadline.time_since_epoch().count());
  return r;
}

}  // namespace heddle::bench::waits
