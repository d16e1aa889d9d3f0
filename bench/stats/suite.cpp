// The stats suite (TaskMan §6.1.1): scheduling overhead on null tasks of random length.
// overhead = (T − T_ideal) / T_ideal with T_ideal = total work / threads, for heddle, oneTBB and
// OpenMP, two distributions (exponential, Pareto with the same mean), two shapes (loop, tree) and
// four mean task lengths. A serial run of the same tasks shows the floor: what spinning on the clock
// and counting each task cost without any runtime; heddle's ratios to its peers compare the
// overheads above that floor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "harness.hpp"
#include "heddle_counters.hpp"
#include "heddle_runtimes.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "runtimes.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench::stats {

namespace {

constexpr const char* heddle_name = "heddle task_group";
constexpr const char* tbb_name = "oneTBB task_group";
constexpr const char* omp_name = "OpenMP tasks";
constexpr double mean_lengths_ns[] = {250, 1000, 10000, 100000};

double overhead(const result& r, const workload& w, unsigned threads) {
  const double ideal = double(w.total_ns) * 1e-9 / threads;
  return (r.median() - ideal) / ideal;
}

// A runtime's overhead above the serial floor, in the same unit as overhead(): (T − T_serial / t) /
// T_ideal, the serial run's time shared over t threads being what the tasks cost with no runtime at
// all. The plain overheads' ratio carries that floor in numerator and denominator alike, which pulls
// every ratio towards 1. NaN (JSON null, "n/a") when the difference lies inside the min–max spread of
// the runtime's runs or of the serial runs (shared over t): too small for these runs to resolve.
double above_floor(const result& r, const result& serial, const workload& w, unsigned threads) {
  const double ideal = double(w.total_ns) * 1e-9 / threads;
  const double excess = r.median() - serial.median() / threads;
  const double spread = std::max(r.max() - r.min(), (serial.max() - serial.min()) / threads);
  return std::abs(excess) <= spread ? std::nan("") : excess / ideal;
}

// heddle's overhead above the floor over a peer's; NaN (JSON null, "n/a") unless both were resolved
// and the peer's is positive.
double overhead_ratio(double heddle, double peer) { return peer > 0 ? heddle / peer : std::nan(""); }

nlohmann::json or_null(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

std::string percent(double x) {
  if (std::isnan(x)) return "n/a";
  char s[32];
  std::snprintf(s, sizeof s, "%.2f%%", 100 * x);
  return s;
}
std::string ratio_text(double x) {
  if (std::isnan(x)) return "n/a";
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", x);
  return s;
}

void run(const options& opt, nlohmann::json& report) {
  // Total work per configuration; the task count follows from the mean length.
  const double work_s = opt.pick(0.002, 0.04, 0.2, 1.0);
  const auto threads = opt.threads_or({1, 2});
  const unsigned main_threads = headline_threads(threads);
  std::printf("## stats: null tasks spinning for random durations, %.0f ms of work per configuration, "
              "%d interleaved repetitions after a warm-up %s\n\n",
              work_s * 1e3, opt.reps, opt.scale_name());

  std::vector<std::unique_ptr<workload>> loads;
  std::uint64_t seed = 1;
  for (shape s : {shape::loop, shape::tree})
    for (distribution d : {distribution::exponential, distribution::pareto})
      for (double mean : mean_lengths_ns)
        loads.push_back(std::make_unique<workload>(d, s, mean, std::size_t(work_s * 1e9 / mean), seed++));

  heddle_runtimes runtimes(threads);
  tbb_arenas arenas(threads);
  std::map<std::string, heddle_counters> counters;  // "<config> <threads>t"
  std::vector<variant> vs;
  for (auto& lp : loads) {
    workload* w = lp.get();
    const std::string config = w->name();
    // Times body() and checks that every task ran exactly once (outside the timed region).
    auto timed_run = [w](const char* who, auto&& body) {
      return timed([&] { body(); return 0; }, [w, who](int) { w->check_and_reset(who); });
    };
    vs.push_back({"serial", 1, config, [=] { return timed_run("serial", [w] { run_serial(*w); }); }});
    for (unsigned t : threads) {
      auto* rt = &runtimes[t];
      auto* arena = &arenas[t];
      auto* count = &counters[config + " " + std::to_string(t) + "t"];
      vs.push_back({heddle_name, t, config, [=] {
                      return (*count)(*rt, [=] { return timed_run(heddle_name, [=] { run_heddle(*rt, *w); }); });
                    }});
      vs.push_back({tbb_name, t, config, [=] { return timed_run(tbb_name, [=] { run_tbb(*arena, *w); }); }});
      vs.push_back({omp_name, t, config, [=] { return timed_run(omp_name, [=] { run_omp(t, *w); }); }});
    }
  }
  const auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, tbb_name).c_str());

  // The overhead table: TaskMan's measure, then each runtime's overhead above the serial floor and
  // the ratios of those.
  std::printf("| shape | distribution | mean | tasks | threads | serial | heddle | oneTBB | OpenMP | heddle − floor | "
              "oneTBB − floor | OpenMP − floor | heddle / oneTBB | heddle / OpenMP |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  auto table = nlohmann::json::array();
  for (auto& lp : loads) {
    const workload& w = *lp;
    const std::string config = w.name();
    const result& serial_run = find(rs, "serial", 1, config);
    const double serial = overhead(serial_run, w, 1);
    for (unsigned t : threads) {
      const result& hr = find(rs, heddle_name, t, config);
      const result& br = find(rs, tbb_name, t, config);
      const result& orr = find(rs, omp_name, t, config);
      const double h = overhead(hr, w, t), b = overhead(br, w, t), o = overhead(orr, w, t);
      const double hf = above_floor(hr, serial_run, w, t), bf = above_floor(br, serial_run, w, t),
                   of = above_floor(orr, serial_run, w, t);
      const double vs_tbb = overhead_ratio(hf, bf), vs_omp = overhead_ratio(hf, of);
      const char* form = w.form == shape::loop ? "loop" : "tree";
      const char* dist = w.dist == distribution::exponential ? "exp" : "pareto";
      std::printf("| %s | %s | %s | %zu | %u | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", form, dist,
                  mean_label(w.mean_ns).c_str(), w.size(), t, percent(serial).c_str(), percent(h).c_str(),
                  percent(b).c_str(), percent(o).c_str(), percent(hf).c_str(), percent(bf).c_str(), percent(of).c_str(),
                  ratio_text(vs_tbb).c_str(), ratio_text(vs_omp).c_str());
      for (auto [variant, value, floored] : {std::tuple{"serial", serial, std::nan("")},
                                             {"heddle", h, hf}, {"oneTBB", b, bf}, {"OpenMP", o, of}})
        table.push_back({{"shape", form}, {"distribution", dist}, {"mean_us", w.mean_ns / 1000}, {"threads", t},
                         {"variant", variant}, {"overhead", value}, {"above_floor", or_null(floored)}});

      // stats_exp_loop_1us_overhead_vs_tbb at the machine's thread count, ..._<t>t_... at every count.
      const std::string stem = std::string("stats_") + dist + "_" + form + "_" + mean_label(w.mean_ns);
      for (auto [peer, value] : {std::pair{"tbb", vs_tbb}, {"omp", vs_omp}}) {
        report["ratios"][stem + "_" + std::to_string(t) + "t_overhead_vs_" + peer] = or_null(value);
        if (t == main_threads) report["ratios"][stem + "_overhead_vs_" + peer] = or_null(value);
      }
    }
  }
  std::printf("\nOverhead = (T − T_ideal) / T_ideal, T_ideal = total work / threads; T is the median. X − floor = "
              "(T_X − T_serial / threads) / T_ideal: the overhead above what the tasks cost with no runtime, n/a "
              "where that difference lies inside the min–max spread of X's runs or the serial runs. The ratios "
              "stats_<distribution>_<shape>_<mean>_overhead_vs_{tbb,omp} (heddle − floor over the peer's, %u "
              "thread%s; null where either is n/a or the peer's is not positive) are in the JSON report.\n\n",
              main_threads, main_threads == 1 ? "" : "s");

  const nlohmann::json counts = print_counters(counters);

  nlohmann::json sizes = nlohmann::json::object();
  for (auto& lp : loads)
    sizes[lp->name()] = {{"tasks", lp->size()}, {"total_work_s", double(lp->total_ns) * 1e-9}, {"tree_depth", lp->depth()}};
  add_suite(report, "stats", rs,
            {{"reps", opt.reps},
             {"pareto_alpha", pareto_alpha},
             {"workloads", sizes},
             {"heddle_counters_per_run", counts},
             {"plot_rows", false},  // 16 configurations: the overhead plot tells more than the time bars
             {"tables", {{"overhead", table}}}});
}

const registration reg{{"stats", 1,
                        "null tasks of random length (exponential, Pareto), loop and tree shapes: overhead of heddle, "
                        "oneTBB and OpenMP",
                        &run}};

}  // namespace

}  // namespace heddle::bench::stats
