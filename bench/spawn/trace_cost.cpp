// SPDX-License-Identifier: Apache-2.0
#include "trace_cost.hpp"

#include <heddle/core/trace.hpp>
#include <heddle/heddle.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "fib.hpp"
#include "report.hpp"
#include "table.hpp"

namespace heddle::bench::spawn {

namespace {

std::string sibling(const char* program) {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / program).string();
}

// One run of a child program: its samples appended to futures and group.
void run_child(const std::string& program, int n, unsigned threads, int reps, result& futures, result& group) {
  const std::string cmd = program + " " + std::to_string(n) + " " + std::to_string(threads) + " " +
                          std::to_string(reps);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot start " + cmd);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  if (pclose(p) != 0) throw std::runtime_error(cmd + " failed: " + out);
  const auto j = nlohmann::json::parse(out);
  for (double s : j.at("futures")) futures.samples.push_back(s);
  for (double s : j.at("group")) group.samples.push_back(s);
}

void compiled_out_ratio(const options& opt, int n, nlohmann::json& report) {
  const std::string traced = sibling("heddle-spawn-child-traced");
  const std::string untraced = sibling("heddle-spawn-child-untraced");
  const unsigned threads = 1;
  const int inner = opt.check ? 1 : 3;
  result in_f{"compiled in, off", threads, "futures", {}}, in_g{"compiled in, off", threads, "task_group", {}};
  result out_f{"compiled out", threads, "futures", {}}, out_g{"compiled out", threads, "task_group", {}};
  for (int r = 0; r < opt.reps; ++r) {  // alternate which goes first
    if (r % 2 == 0) run_child(traced, n, threads, inner, in_f, in_g);
    run_child(untraced, n, threads, inner, out_f, out_g);
    if (r % 2 == 1) run_child(traced, n, threads, inner, in_f, in_g);
  }
  std::printf("### the trace recorder compiled in but off, against compiled out (fib(%d), 1 worker, two child "
              "programs alternately, %d runs of %d)\n\n%s\n",
              n, opt.reps, inner, markdown_table({in_f, out_f, in_g, out_g}, "compiled out").c_str());
  // The two programs alternate within each round: the ratio is formed round by round.
  const estimate futures = paired_ratio(in_f, out_f), group = paired_ratio(in_g, out_g);
  std::printf("trace_off_vs_compiled_out: futures %.3f (95%% interval %.3f–%.3f), task_group %.3f (%.3f–%.3f) (target "
              "≤ 1.02)\n\n",
              futures.value, futures.lo, futures.hi, group.value, group.lo, group.hi);
  add_figure(report, "trace_off_vs_compiled_out", futures,
             "fib with futures, recorder compiled in but off / compiled out, per round, 1 thread", at_most(1.02));
  add_figure(report, "trace_off_vs_compiled_out_group", group, "the same with task_group", at_most(1.02));
}

void ns_per_event(const options& opt, int n, nlohmann::json& report) {
  heddle::runtime rt({.threads = 1});
  const long expected = fib_value(n);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("heddle-bench-spawn-" + std::to_string(getpid()) + ".trace.json"))
                               .string();
  heddle::trace::options o;
  o.buffer_bytes = static_cast<std::size_t>(fib_tasks(n) + 1024) * 2 * sizeof(core_detail::trace::record);
  double records = 0;
  std::vector<variant> vs;
  vs.push_back({"trace off", 1, "futures", [&] {
                  return timed([&] { return *rt.task(fib_heddle, n); }, expect_equal(expected, "fib, trace off"));
                }});
  vs.push_back({"trace on", 1, "futures", [&] {
                  heddle::trace::start(path, o);
                  // The worker's first record gives it its buffer (once per thread and session):
                  // outside the timed region, which measures what each record costs.
                  if (*rt.task(fib_heddle, 2) != 1) throw std::runtime_error("fib(2) is not 1");
                  const double s = timed([&] { return *rt.task(fib_heddle, n); },
                                         expect_equal(expected, "fib, traced"));
                  const heddle::trace::result r = heddle::trace::stop();
                  if (r.dropped) throw std::runtime_error("the trace dropped records: its buffer is too small");
                  records = static_cast<double>(r.records);
                  return s;
                }});
  const auto rs = run_interleaved(vs, opt.reps);
  std::filesystem::remove(path);
  const auto& on = find(rs, "trace on", 1, "futures");
  const auto& off = find(rs, "trace off", 1, "futures");
  const estimate ns = paired(on, off, [&](double a, double b) { return (a - b) / records * 1e9; });
  std::printf("### tracing on (fib(%d), 1 worker, %.0f records a run)\n\n%s\ntrace_ns_per_event: %.1f ns (%.1f–%.1f; "
              "target ≤ 30)\n\n",
              n, records, markdown_table(rs, "trace off").c_str(), ns.value, ns.lo, ns.hi);
  add_figure(report, "trace_ns_per_event", ns, "(T traced - T off) / records, fib with futures, 1 thread, per round",
             at_most(30));
  add_figure(report, "trace_on_vs_off", paired_ratio(on, off),
             "fib with futures traced / not traced, per round, 1 thread");
}

}  // namespace

void measure_trace_cost(const options& opt, int n, nlohmann::json& report) {
  if (!heddle::trace::compiled_in()) {
    std::printf("(the trace's cost is not measured: heddle-bench was built with -DHEDDLE_TRACE=OFF)\n\n");
    return;
  }
  compiled_out_ratio(opt, n, report);
  if (heddle::trace::active()) {
    std::printf("(trace_ns_per_event is not measured: a trace is being recorded, --trace)\n\n");
    return;
  }
  ns_per_event(opt, n, report);
}

}  // namespace heddle::bench::spawn
