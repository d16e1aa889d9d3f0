// SPDX-License-Identifier: Apache-2.0
// The sort experiment: 10^7 random ints and 10^7 random doubles sorted by heddle::parallel_sort,
// tbb::parallel_sort, std::sort(std::execution::par) (libstdc++'s parallel algorithms, whose
// backend is oneTBB: it runs inside the same oneTBB arena) and serial std::sort, interleaved; every
// result compared with the serial one.
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <execution>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <heddle/heddle.hpp>

#include "experiment.hpp"
#include "heddle_runtimes.hpp"
#include "report.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench::algorithms {

namespace sort_experiment {
namespace {

template <class T>
std::vector<T> random_input(std::size_t n, std::uint64_t seed) {
  std::vector<T> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    if constexpr (std::is_integral_v<T>) x = static_cast<T>(seed >> 33);
    else x = T(seed >> 11) * 0x1p-53 * 2e6 - 1e6;
  }
  return v;
}

template <class T>
void run_one(const options& opt, nlohmann::json& report, const char* type, const char* key) {
  const std::size_t n = opt.pick<std::size_t>(20'000, 1'000'000, 10'000'000, 100'000'000);
  const auto threads = opt.threads_or({1, 2, 4});
  std::printf("## sort: %zu random %ss, %d interleaved repetitions after a warm-up %s\n\n", n, type, opt.reps,
              opt.scale_name());
  const std::vector<T> input = random_input<T>(n, 12345);
  std::vector<T> want = input;
  std::sort(want.begin(), want.end());
  auto work = std::make_shared<std::vector<T>>(n);
  auto runtimes = std::make_shared<heddle_runtimes>(threads);
  auto arenas = std::make_shared<tbb_arenas>(threads);

  auto once = [work, &input, &want](const std::string& who, auto&& sort) {
    std::copy(input.begin(), input.end(), work->begin());  // outside the timed region
    return timed(
        [&] {
          sort(*work);
          return 0;
        },
        [&](int) {
          if (*work != want) throw std::runtime_error("sort: " + who + " differs from std::sort");
        });
  };
  std::vector<variant> vs;
  vs.push_back({"std::sort", 1, {}, [once] {
                  return once("std::sort", [](auto& v) { std::sort(v.begin(), v.end()); });
                }});
  for (unsigned t : threads) {
    vs.push_back({"heddle", t, {}, [once, runtimes, t] {
                    return once("heddle", [&](auto& v) { heddle::parallel_sort((*runtimes)[t], v.begin(), v.end()); });
                  }});
    vs.push_back({"oneTBB", t, {}, [once, arenas, t] {
                    return once("oneTBB", [&](auto& v) {
                      (*arenas)[t].execute([&] { tbb::parallel_sort(v.begin(), v.end()); });
                    });
                  }});
    vs.push_back({"std::execution::par", t, {}, [once, arenas, t] {
                    return once("std::execution::par", [&](auto& v) {
                      (*arenas)[t].execute([&] { std::sort(std::execution::par, v.begin(), v.end()); });
                    });
                  }});
  }
  auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, "oneTBB").c_str());
  const std::string name = std::string("sort_") + key;
  const unsigned head = headline_threads(threads);
  auto ratio = [&](unsigned t) { return paired_ratio(find(rs, "heddle", t), find(rs, "oneTBB", t)); };
  auto plural = [](unsigned t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  add_figure(report, name + "_vs_tbb", ratio(head),
             "heddle::parallel_sort / tbb::parallel_sort, " + std::string(type) + "s, per round, " + plural(head) +
                 " (most without oversubscription)",
             at_most(1.0));
  for (unsigned t : threads)
    add_figure(report, name + "_" + std::to_string(t) + "t_vs_tbb", ratio(t),
               "heddle::parallel_sort / tbb::parallel_sort, " + std::string(type) + "s, per round, " + plural(t));
  add_suite(report, name, rs, {{"n", n}, {"reps", opt.reps}});
}

void run_sort(const options& opt, nlohmann::json& report) {
  run_one<int>(opt, report, "int", "int");
  run_one<double>(opt, report, "double", "double");
}

const experiment_registration reg{{"sort", 50, &run_sort}};

}  // namespace
}  // namespace sort_experiment

}  // namespace heddle::bench::algorithms
