// SPDX-License-Identifier: Apache-2.0
// The spawn suite: fib(n) with a task per call, heddle against oneTBB and serial, interleaved in one
// process. Measures what a spawn costs: (T_1 thread − T_serial) / tasks.
#include <heddle/heddle.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "fib.hpp"
#include "harness.hpp"
#include "heddle_counters.hpp"
#include "heddle_runtimes.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"
#include "tbb_variant.hpp"
#include "trace_cost.hpp"

namespace heddle::bench::spawn {

namespace {

constexpr const char* tbb_name = "oneTBB task_group";

void run(const options& opt, nlohmann::json& report) {
  const int n = opt.pick(18, 27, 30, 32);
  const long expected = fib_value(n);
  const long tasks = fib_tasks(n);
  const auto threads = opt.threads_or({1, 2});
  std::printf("## spawn: fib(%d), a task per call (%ld tasks), %d interleaved repetitions after a warm-up %s\n\n", n,
              tasks, opt.reps, opt.scale_name());

  heddle_runtimes runtimes(threads);  // created once per thread count, outside the timed region
  tbb_arenas arenas(threads);
  std::map<std::string, heddle_counters> counters;  // "<variant> <threads>t"

  std::vector<variant> vs;
  vs.push_back({"serial", 1, {}, [=] {
                  return timed([=] { return fib_serial(n); }, expect_equal(expected, "serial"));
                }});
  for (unsigned t : threads) {
    auto& rt = runtimes[t];
    auto& arena = arenas[t];
    auto& futures = counters["heddle " + std::to_string(t) + "t"];
    auto& group = counters["heddle task_group " + std::to_string(t) + "t"];
    vs.push_back({"heddle", t, {}, [=, &rt, &futures] {
                    return futures(rt, [&] {
                      return timed([&] { return *rt.task(fib_heddle, n); }, expect_equal(expected, "heddle"));
                    });
                  }});
    vs.push_back({"heddle task_group", t, {}, [=, &rt, &group] {
                    return group(rt, [&] {
                      return timed([&] { return *rt.task(fib_heddle_group, n); },
                                   expect_equal(expected, "heddle task_group"));
                    });
                  }});
    vs.push_back(tbb_fib_variant(tbb_name, t, arena, n, expected));
  }
  const auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, tbb_name).c_str());

  // The headline compares heddle's futures with oneTBB's task_group: two different ways of writing
  // fib. Beside it, the same shape in both runtimes (task_group, two runs and a wait per call), so
  // that the reader sees how much of the headline is the spelling rather than the scheduler.
  // Every ratio is formed round by round (both variants measured in the same round) and reported
  // as the median over the rounds with its 95 % interval (harness.hpp: estimate).
  std::printf(
      "| threads | heddle futures / oneTBB task_group (95 %% interval) | heddle task_group / oneTBB task_group (same "
      "shape) |\n|---:|---:|---:|\n");
  for (unsigned t : threads) {
    const auto& tbb = find(rs, tbb_name, t);
    const auto futures = paired_ratio(find(rs, "heddle", t), tbb),
               group = paired_ratio(find(rs, "heddle task_group", t), tbb);
    std::printf("| %u | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) |\n", t, futures.value, futures.lo, futures.hi, group.value,
                group.lo, group.hi);
    const auto ts = std::to_string(t);
    const std::string count = ts + " thread" + (t == 1 ? "" : "s");
    add_figure(report, "fib_" + ts + "t_vs_tbb", futures, "heddle futures / oneTBB task_group, per round, " + count,
               at_most(1.0));
    add_figure(report, "fib_group_" + ts + "t_vs_tbb", group,
               "heddle task_group / oneTBB task_group (the same shape), per round, " + count, at_most(1.0));
  }
  std::printf("\n");
  if (std::find(threads.begin(), threads.end(), 1u) != threads.end()) {
    const auto& serial = find(rs, "serial", 1);
    auto per_spawn = [&](const char* v) {
      return paired(find(rs, v, 1), serial, [&](double x, double s) { return (x - s) / double(tasks) * 1e9; });
    };
    add_figure(report, "spawn_ns_1t", per_spawn("heddle"),
               "ns per task, heddle futures: (T_1t - T_serial) / tasks, per round");
    add_figure(report, "spawn_ns_1t_group", per_spawn("heddle task_group"), "ns per task, heddle task_group");
    add_figure(report, "spawn_ns_1t_tbb", per_spawn(tbb_name), "ns per task, oneTBB task_group");
  }

  const nlohmann::json stats = print_counters(counters);
  measure_trace_cost(opt, n, report);
  add_suite(report, "spawn", rs,
            {{"n", n},
             {"tasks", tasks},
             {"reps", opt.reps},
             {"serial", "fib_serial built at -O3 with -fno-optimize-sibling-calls and noinline: both calls kept"},
             {"heddle_counters_per_run", stats}});
}

const registration reg{
    {"spawn", 0, "fib(n) with a task per call: heddle futures and task_group, oneTBB task_group, serial", &run}};

}  // namespace

}  // namespace heddle::bench::spawn
