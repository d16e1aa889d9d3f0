// SPDX-License-Identifier: Apache-2.0
// The coroutines suite: fib(n) written as heddle coroutines against the same recursion with heddle's
// futures and with oneTBB's task_group, interleaved in one process (co_fib.cpp, heddle.cpp, tbb.cpp);
// and the echo server over 1,000 connections, its server side as coroutines against the same
// server as `then` callbacks (co_echo.cpp); and a million coroutines suspended on timers at once,
// what each costs beyond its frame and how fast they all resume (co_suspended.cpp).
#include <heddle/heddle.hpp>

#include <cstdio>
#include <map>
#include <string>

#include "co_echo.hpp"
#include "co_suspended.hpp"
#include "fib.hpp"
#include "harness.hpp"
#include "heddle_runtimes.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"
#include "tbb_variant.hpp"

namespace heddle::bench::spawn {

namespace {

constexpr const char* tbb_name = "oneTBB task_group";
constexpr const char* futures_name = "heddle futures";
constexpr const char* co_name = "heddle co_task";
constexpr const char* co_inline_name = "heddle co_task, one child awaited in place";
constexpr const char* echo_co_name = "echo server, coroutines";
constexpr const char* echo_cb_name = "echo server, callbacks";
constexpr int echo_connections = 1000;
constexpr const char* echo_config = "1000 connections";
// Both groups run three times the repetitions asked for. The echo pair runs in an interleaved run of
// its own: its time is both styles' system calls and the scheduling of three threads (the client
// and two workers) on two cores, and five medians spread ±15 % while callgrind counts alike
// instructions a message for the two styles (2,091–2,110 against 2,079–2,231; docs/benchmarks.md).
// The fib variants' samples spread as much on this VM (a coroutine run of 75–122 ms in one run of
// five, its instructions unchanged), and the ratio of two such medians moved ±0.15 between runs.
// More samples narrow the ratios' intervals, which the suite prints, without favouring any variant:
// every one gets the same number, interleaved as before.
constexpr int reps_factor = 3;

void run(const options& opt, nlohmann::json& report) {
  const int n = opt.pick(18, 27, 30, 32);
  const long expected = fib_value(n);
  const int echo_rounds = opt.pick(2, 10, 20, 50);
  const auto threads = opt.threads_or({1, 2});
  std::printf(
      "## coroutines: fib(%d) as coroutines, futures and oneTBB tasks; an echo server over %d connections, %d rounds, "
      "as coroutines and as callbacks; %d interleaved repetitions after a warm-up %s\n\n",
      n, echo_connections, echo_rounds, reps_factor * opt.reps, opt.scale_name());

  // First, while the block caches hold no freed blocks of the runs below: memory measured as new
  // resident pages is then the coroutines' own.
  const int suspended = opt.pick(10'000, 100'000, 1'000'000, 1'000'000);
  const unsigned suspended_threads = headline_threads(threads);
  suspended_figures sf;
  {
    heddle::runtime rt(suspended_threads);
    sf = measure_suspended(rt, suspended);
  }
  std::printf(
      "%d coroutines suspended on timers at once (%u threads): frame %.0f bytes, spawned and suspended %.0f bytes, "
      "beyond the frame %.0f bytes each; %.2f million completions/s once their deadline passed\n\n",
      suspended, suspended_threads, sf.frame_bytes, sf.suspended_bytes, sf.beyond_frame_bytes,
      sf.completions_per_s / 1e6);
  add_ratio(report, "co_bytes_per_suspended", sf.beyond_frame_bytes,
            "bytes per coroutine suspended on a timer beyond its frame (resident memory; " + std::to_string(suspended) +
                " at once)",
            at_most(256));
  add_ratio(report, "co_suspended_completions_per_s", sf.completions_per_s,
            "coroutines resumed and finished per second, " + std::to_string(suspended) + " timers due at once");

  heddle_runtimes runtimes(threads);
  tbb_arenas arenas(threads);
  std::vector<variant> vs, echo_vs;
  for (unsigned t : threads) {
    auto& rt = runtimes[t];
    auto& arena = arenas[t];
    vs.push_back({co_name, t, {}, [=, &rt] {
                    return timed([&] { return rt.spawn(co_fib(n)).get(); }, expect_equal(expected, co_name));
                  }});
    vs.push_back({co_inline_name, t, {}, [=, &rt] {
                    return timed([&] { return rt.spawn(co_fib_inline(n)).get(); },
                                 expect_equal(expected, co_inline_name));
                  }});
    vs.push_back({futures_name, t, {}, [=, &rt] {
                    return timed([&] { return *rt.task(fib_heddle, n); }, expect_equal(expected, futures_name));
                  }});
    vs.push_back(tbb_fib_variant(tbb_name, t, arena, n, expected));
    // Their own config: the table's "vs heddle futures" column divides only rows of one config, and
    // an echo run's time over fib's means nothing.
    echo_vs.push_back({echo_co_name, t, echo_config, [&rt, echo_rounds] {
                         return time_echo(rt, echo_style::coroutines, echo_connections, echo_rounds);
                       }});
    echo_vs.push_back({echo_cb_name, t, echo_config, [&rt, echo_rounds] {
                         return time_echo(rt, echo_style::callbacks, echo_connections, echo_rounds);
                       }});
  }
  const int reps = reps_factor * opt.reps;
  auto rs = run_interleaved(vs, reps);
  for (auto& r : run_interleaved(echo_vs, reps)) rs.push_back(std::move(r));
  std::printf("%s\n", markdown_table(rs, futures_name).c_str());
  std::printf("| threads | co_task / futures (95 %% interval) | co_task / oneTBB | co_task (one in place) / futures | "
              "echo throughput, "
              "coroutines / callbacks (95 %% interval) |\n"
              "|---:|---:|---:|---:|---:|\n");
  for (unsigned t : threads) {
    const result &co = find(rs, co_name, t), &fut = find(rs, futures_name, t), &tbb = find(rs, tbb_name, t),
                 &co_inline = find(rs, co_inline_name, t);
    const result &echo_co = find(rs, echo_co_name, t, echo_config), &echo_cb = find(rs, echo_cb_name, t, echo_config);
    // Throughput: the callbacks' time over the coroutines' in the same round; above 1, coroutines serve faster.
    const estimate echo = paired_ratio(echo_cb, echo_co), co_fut = paired_ratio(co, fut),
                   co_tbb = paired_ratio(co, tbb), inl = paired_ratio(co_inline, fut);
    std::printf("| %u | %.2f (%.2f–%.2f) | %.2f | %.2f | %.2f (%.2f–%.2f) |\n", t, co_fut.value, co_fut.lo, co_fut.hi,
                co_tbb.value, inl.value, echo.value, echo.lo, echo.hi);
    const auto ts = std::to_string(t);
    const std::string count = ts + " thread" + (t == 1 ? "" : "s");
    add_figure(report, "co_fib_" + ts + "t_vs_futures", co_fut,
               "fib as coroutines (both children spawned and awaited) / heddle futures, per round, " + count,
               at_most(1.5));
    add_figure(report, "co_fib_" + ts + "t_vs_tbb", co_tbb,
               "fib as coroutines / oneTBB task_group, per round, " + count);
    add_figure(report, "co_fib_inline_" + ts + "t_vs_futures", inl,
               "fib as coroutines, one child awaited in place / heddle futures, per round, " + count);
    add_figure(report, "co_echo_throughput_" + ts + "t_vs_callbacks", echo,
               "echo server throughput, " + std::to_string(echo_connections) +
                   " connections: coroutines / then callbacks (callbacks' time / coroutines', per round), " + count,
               at_least(0.95));
  }
  std::printf("\n");
  add_suite(report, "coroutines", rs,
            {{"n", n}, {"echo_connections", echo_connections}, {"echo_rounds", echo_rounds}, {"reps", reps}});
}

const registration reg{{"coroutines", 0,
                        "fib(n) as heddle coroutines against heddle futures and oneTBB task_group; an echo server as "
                        "coroutines and as callbacks",
                        &run}};

}  // namespace

}  // namespace heddle::bench::spawn
