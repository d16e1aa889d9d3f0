// SPDX-License-Identifier: Apache-2.0
// heddle-bench-am-flag-work: how a raw shared-memory round trip (two processes, one flag line each
// way, a PAUSE between looks: heddle-bench-am-raw's shm-pause-lines-64-apart way, one of the raw
// ways heddle-bench am takes the fastest of) changes when a side does some work between seeing its
// flag and writing the other's: the time a runtime's call path takes on each side of a round trip,
// without the runtime. Every work's round trips are timed in turn, round after round
// (interleaved), in a fresh process pair each time; medians, min–max and the ratio to no work. Work
// is an empty loop calibrated in ns on this machine.
//   heddle-bench-am-flag-work [--reps 9] [--round-trips 100000] [--work 0,12,25,50,100,200,400]
// (docs/benchmarks.md, "The short call path on the AMD VM", reads it.)
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// Two adjacent lines (heddle-bench-am-raw's lines-64-apart ways).
struct alignas(64) flag_line {
  std::atomic<std::uint64_t> v{0};
};
struct flags {
  flag_line ping, pong;
};

[[gnu::noinline]] void work(std::uint64_t iterations) {
  for (std::uint64_t i = 0; i < iterations; ++i) asm volatile("" ::: "memory");
}

// ns per iteration of work(), the median of five timings.
double calibrate() {
  std::vector<double> ns;
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t n = 20'000'000;
    const auto t0 = clock_type::now();
    work(n);
    ns.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / static_cast<double>(n));
  }
  std::sort(ns.begin(), ns.end());
  return ns[2];
}

void wait_for(const std::atomic<std::uint64_t>& v, std::uint64_t x) {
  while (v.load(std::memory_order_acquire) != x) __builtin_ia32_pause();
}

// ns per round trip: the parent pings, the child answers, each after `iterations` of work when it
// works (the answering side only, or both).
double round_trips(flags* f, std::uint64_t n, std::uint64_t iterations, bool both) {
  f->ping.v.store(0);
  f->pong.v.store(0);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    for (std::uint64_t i = 1; i <= n + 1; ++i) {
      wait_for(f->ping.v, i);
      work(iterations);
      f->pong.v.store(i, std::memory_order_release);
    }
    std::_Exit(0);
  }
  f->ping.v.store(1, std::memory_order_release);  // the first round trip starts the child: not timed
  wait_for(f->pong.v, 1);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 2; i <= n + 1; ++i) {
    f->ping.v.store(i, std::memory_order_release);
    wait_for(f->pong.v, i);
    if (both) work(iterations);
  }
  const double ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / static_cast<double>(n);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("the answering process failed");
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"heddle-bench-am-flag-work: the raw shared-memory round trip with work on either side"};
  int reps = 9;
  std::uint64_t n = 100'000;
  std::vector<double> work_ns{0, 12, 25, 50, 100, 200, 400};
  app.add_option("--reps", reps, "rounds (each times every work once)")->check(CLI::Range(3, 1000));
  app.add_option("--round-trips", n, "round trips a timing")->check(CLI::Range(1000, 100'000'000));
  app.add_option("--work", work_ns, "ns of work a side, comma-separated")->delimiter(',')->check(CLI::Range(0.0, 1e6));
  CLI11_PARSE(app, argc, argv);

  try {
    auto* f = static_cast<flags*>(::mmap(nullptr, sizeof(flags), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                                         0));
    if (f == MAP_FAILED) throw std::runtime_error("mmap failed");
    new (f) flags;
    const double per_iteration = calibrate();
    std::printf("work: %.3f ns an iteration of an empty loop; %d rounds of %llu round trips\n", per_iteration, reps,
                static_cast<unsigned long long>(n));
    struct variant {
      double ns;
      bool both;
      std::uint64_t iterations;
      std::vector<double> samples;
    };
    std::vector<variant> vs;
    for (bool both : {false, true})
      for (double w : work_ns) {
        if (both && w == 0) continue;  // the same as the answering side's 0
        vs.push_back({w, both, static_cast<std::uint64_t>(w / per_iteration + 0.5), {}});
      }
    round_trips(f, n / 10, 0, false);  // warm-up
    for (int r = 0; r < reps; ++r)
      for (variant& v : vs) v.samples.push_back(round_trips(f, n, v.iterations, v.both));
    std::printf(
        "\n| work a side | where | round trip, median ns | min–max | vs no work |\n|---:|---|---:|---:|---:|\n");
    double none = 0;
    for (variant& v : vs) {
      std::sort(v.samples.begin(), v.samples.end());
      const double median = v.samples[v.samples.size() / 2];
      if (v.ns == 0 && !v.both) none = median;
      std::printf("| %.0f ns | %s | %.1f | %.1f–%.1f | %.2f |\n", v.ns, v.both ? "both sides" : "answering side",
                  median, v.samples.front(), v.samples.back(), none > 0 ? median / none : 0.0);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench-am-flag-work: %s\n", e.what());
    return 1;
  }
}
