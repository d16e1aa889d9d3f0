// SPDX-License-Identifier: Apache-2.0
// The stats suite (TaskMan §6.1.1): scheduling overhead on null tasks of random length.
// overhead = (T − T_ideal) / T_ideal with T_ideal = total work / threads, for heddle, oneTBB and
// OpenMP, two distributions (exponential, Pareto with the same mean), two shapes (loop, tree) and
// four mean task lengths. A serial run of the same tasks shows the floor: what spinning on the clock
// and counting each task cost without any runtime; heddle's ratios to its peers compare the
// overheads above that floor.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

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
// all. (The plain overheads' ratio carries that floor in numerator and denominator alike, which
// pulls every ratio towards 1.) Formed round by round from the runtime's and serial's samples of
// the same round (both from one run_interleaved call), as the median over the rounds with its 95 %
// interval.
estimate above_floor(const result& r, const result& serial, const workload& w, unsigned threads) {
  const double ideal = double(w.total_ns) * 1e-9 / threads;
  return paired(r, serial, [=](double x, double s) { return (x - s / threads) / ideal; });
}

// Whether an overhead above the floor is resolved: its interval excludes zero (one round shows
// nothing either way, and counts as resolved by its sign). Where it is not, the table says n/a.
bool resolved(const estimate& e) { return e.lo > 0 || e.hi < 0; }

// heddle's overhead above the floor over a peer's: (h_i − s_i / t) / (p_i − s_i / t) for every round
// i (T_ideal cancels), the median over those rounds with its interval. The three results must come
// from one run_interleaved call (std::logic_error otherwise). Not formed (NaN: JSON null, verdict
// "not shown") unless the peer's overhead above the floor is resolved as positive (`peer_floor`, its
// interval above zero): a denominator the runs cannot tell from zero makes the ratio noise, and
// keeping only the rounds where it happened to be positive would bias the rest towards a small
// ratio. A round whose denominator is still ≤ 0 forms no ratio and is left out; fewer than half the
// rounds left: not formed either.
estimate overhead_ratio(const result& heddle, const result& peer, const result& serial, unsigned threads,
                        const estimate& peer_floor) {
  const std::size_t n = serial.samples.size();
  if (heddle.samples.size() != n || peer.samples.size() != n || n == 0)
    throw std::logic_error("heddle-bench: " + heddle.name + ", " + peer.name +
                           " and serial were not measured in the "
                           "same rounds");
  const double not_formed = std::nan("");
  if (!(peer_floor.lo > 0)) return {not_formed, not_formed, not_formed, 0};
  std::vector<double> per_round;
  for (std::size_t i = 0; i < n; ++i) {
    const double floor = serial.samples[i] / threads, below = peer.samples[i] - floor;
    if (below > 0) per_round.push_back((heddle.samples[i] - floor) / below);
  }
  if (2 * per_round.size() < n) return {not_formed, not_formed, not_formed, 0};
  return median_with_interval(std::move(per_round));
}

nlohmann::json or_null(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

std::string percent(double x) {
  if (std::isnan(x)) return "n/a";
  char s[32];
  std::snprintf(s, sizeof s, "%.2f%%", 100 * x);
  return s;
}
// "0.61 (0.55–0.70)": a ratio and its interval (none for a single round); "n/a" when not formed.
std::string ratio_text(const estimate& e) {
  if (std::isnan(e.value)) return "n/a";
  char s[64];
  if (e.has_interval()) std::snprintf(s, sizeof s, "%.2f (%.2f–%.2f)", e.value, e.lo, e.hi);
  else std::snprintf(s, sizeof s, "%.2f", e.value);
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
      return timed(
          [&] {
            body();
            return 0;
          },
          [w, who](int) { w->check_and_reset(who); });
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
  // the ratios of those, both round by round. The figures are recorded after the table, so that
  // their lines do not break it.
  std::printf(
      "| shape | distribution | mean | tasks | threads | serial | heddle | oneTBB | OpenMP | heddle − floor | "
      "oneTBB − floor | OpenMP − floor | heddle / oneTBB (95 %% interval) | heddle / OpenMP (95 %% interval) |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  struct pending_figure {
    std::string name;
    estimate value;
    std::string meaning;
    std::optional<target> goal;
  };
  std::vector<pending_figure> figures;
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
      const estimate hf = above_floor(hr, serial_run, w, t), bf = above_floor(br, serial_run, w, t),
                     of = above_floor(orr, serial_run, w, t);
      const estimate vs_tbb = overhead_ratio(hr, br, serial_run, t, bf),
                     vs_omp = overhead_ratio(hr, orr, serial_run, t, of);
      auto shown = [](const estimate& e) { return resolved(e) ? e.value : std::nan(""); };
      const char* form = w.form == shape::loop ? "loop" : "tree";
      const char* dist = w.dist == distribution::exponential ? "exp" : "pareto";
      std::printf("| %s | %s | %s | %zu | %u | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", form, dist,
                  mean_label(w.mean_ns).c_str(), w.size(), t, percent(serial).c_str(), percent(h).c_str(),
                  percent(b).c_str(), percent(o).c_str(), percent(shown(hf)).c_str(), percent(shown(bf)).c_str(),
                  percent(shown(of)).c_str(), ratio_text(vs_tbb).c_str(), ratio_text(vs_omp).c_str());
      // Every row has the same keys: the CSV's columns are the first row's (plot.cpp).
      const estimate none{std::nan(""), std::nan(""), std::nan(""), 0};
      for (auto [variant, value, floored] :
           {std::tuple{"serial", serial, none}, {"heddle", h, hf}, {"oneTBB", b, bf}, {"OpenMP", o, of}})
        table.push_back({{"shape", form},
                         {"distribution", dist},
                         {"mean_us", w.mean_ns / 1000},
                         {"threads", t},
                         {"variant", variant},
                         {"overhead", value},
                         {"above_floor", or_null(shown(floored))},
                         {"above_floor_lo", or_null(floored.lo)},
                         {"above_floor_hi", or_null(floored.hi)}});

      // stats_exp_loop_1us_overhead_vs_tbb at the machine's thread count, ..._<t>t_... at every count;
      // the former held to ≤ 1 where the mean task is 1 µs or longer.
      const std::string stem = std::string("stats_") + dist + "_" + form + "_" + mean_label(w.mean_ns);
      const std::string where = std::string(dist) + " " + form + " " + mean_label(w.mean_ns) + ", " +
                                std::to_string(t) + (t == 1 ? " thread" : " threads");
      for (auto [peer, peer_name, value] : {std::tuple{"tbb", tbb_name, vs_tbb}, {"omp", omp_name, vs_omp}}) {
        const std::string meaning = std::string("(heddle − floor) / (") + peer_name +
                                    " − floor), overheads above the serial floor, per round, " + where;
        figures.push_back({stem + "_" + std::to_string(t) + "t_overhead_vs_" + peer, value, meaning, std::nullopt});
        if (t == main_threads)
          figures.push_back({stem + "_overhead_vs_" + peer, value, meaning + " (most without oversubscription)",
                             w.mean_ns >= 1000 ? std::optional<target>(at_most(1.0)) : std::nullopt});
      }
    }
  }
  std::printf("\nOverhead = (T − T_ideal) / T_ideal, T_ideal = total work / threads; T is the median. X − floor = "
              "(T_X − T_serial / threads) / T_ideal, round by round (T_serial of the same round), the median: the "
              "overhead above what the tasks cost with no runtime, n/a where its 95 %% interval holds 0. heddle / "
              "peer: heddle − floor over the peer's, round by round, the median with its 95 %% interval; n/a where "
              "the peer's is n/a or not positive (or positive in fewer than half the rounds). They are the figures "
              "stats_<distribution>_<shape>_<mean>_overhead_vs_{tbb,omp} (%u thread%s; ≤ 1 the target from 1 µs) "
              "and stats_..._<t>t_overhead_vs_{tbb,omp}:\n\n",
              main_threads, main_threads == 1 ? "" : "s");
  for (const auto& f : figures) add_figure(report, f.name, f.value, f.meaning, f.goal);
  std::printf("\n");

  const nlohmann::json counts = print_counters(counters);

  nlohmann::json sizes = nlohmann::json::object();
  for (auto& lp : loads)
    sizes[lp->name()] = {
        {"tasks", lp->size()}, {"total_work_s", double(lp->total_ns) * 1e-9}, {"tree_depth", lp->depth()}};
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
