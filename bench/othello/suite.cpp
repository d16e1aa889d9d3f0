// SPDX-License-Identifier: Apache-2.0
// The othello suite (TaskMan §6.1.3, Hower & Jackson): an Othello player's minimax search to depth
// d from a few mid-game positions, a task per child down to depth d − 2 and the serial search
// below, with the simple heuristic (disc difference) and the strategic one (square weights).
// heddle (futures, task_group) against oneTBB task_group and serial, interleaved in one process;
// every parallel run's best move and score must equal serial's.
#include <heddle/heddle.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.hpp"
#include "heddle_counters.hpp"
#include "heddle_runtimes.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "search.hpp"
#include "table.hpp"
#include "tbb_arenas.hpp"

namespace heddle::bench::othello {

namespace {

constexpr const char* tbb_name = "oneTBB task_group";

// The positions: playout_plies random moves from the initial board (board.hpp: playout), one per
// seed, for seeds 1, 2, 3 ... skipping a position whose side to move has to pass (seed 6 does).
constexpr int playout_plies = 20;

struct position {
  std::uint32_t seed;
  board b;
};

std::vector<position> positions(int n) {
  std::vector<position> ps;
  for (std::uint32_t seed = 1; int(ps.size()) < n; ++seed) {
    const board b = playout(seed, playout_plies);
    if (legal_moves(b)) ps.push_back({seed, b});
  }
  return ps;
}

std::string describe(const move_score& r) { return square_name(r.move) + " (score " + std::to_string(r.score) + ")"; }

// A check for timed(): every position's move and score as serial found them.
auto expect_results(const std::vector<move_score>& expected, const std::vector<position>& pos, std::string variant,
                    unsigned threads, heuristic h, int depth) {
  return [&expected, &pos, variant = std::move(variant), threads, h, depth](const std::vector<move_score>& got) {
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (got.at(i) != expected[i])
        throw std::runtime_error("othello: " + variant + " at " + std::to_string(threads) + " thread" +
                                 (threads == 1 ? "" : "s") + ", " + name(h) + " heuristic, depth " +
                                 std::to_string(depth) + ", position " + std::to_string(i) + " (seed " +
                                 std::to_string(pos[i].seed) + "): expected " + describe(expected[i]) + ", got " +
                                 describe(got[i]));
  };
}

struct setting {
  heuristic h;
  int depth;
  std::string config;  // "simple d=7"
  std::vector<move_score> expected;
  std::vector<std::uint64_t> nodes;  // per position
  std::uint64_t total_nodes = 0;
};

void run(const options& opt, nlohmann::json& report) {
  // Positions and depth per scale, and the nodes one run searches (all positions): --check 2 at
  // d=4, 35 k; --quick 4 at d=6, 9.9 M (a serial run ~0.2 s on the 2-core VM); standard 3 at d=7,
  // 114 M; --full 2 at d=8, 735 M. Both heuristics search the same tree (no pruning); the
  // strategic one costs a little more per leaf.
  const int n_positions = opt.pick(2, 4, 3, 2);
  const int depth = opt.pick(4, 6, 7, 8);
  const auto threads = opt.threads_or({1, 2, 4});

  const std::vector<position> pos = positions(n_positions);

  std::vector<setting> settings;
  for (auto [h, d] : {std::pair{heuristic::simple, depth}, std::pair{heuristic::strategic, depth}}) {
    setting s{h, d, std::string(name(h)) + " d=" + std::to_string(d), {}, {}, 0};
    for (const auto& p : pos) {
      s.expected.push_back(search_serial(p.b, d, h));  // outside every timed region
      s.nodes.push_back(count_nodes(p.b, d));
      s.total_nodes += s.nodes.back();
    }
    settings.push_back(std::move(s));
  }

  std::printf("## othello: minimax (no pruning) to depth d from %d positions (%d random plies from the start, "
              "one per seed), a task per child down to depth d-%d, %d interleaved repetitions after a warm-up %s\n\n",
              n_positions, playout_plies, serial_plies, opt.reps, opt.scale_name());
  for (int i = 0; i < n_positions; ++i) {
    std::printf("position %d (seed %u): %d discs, %d moves;", i, pos[i].seed,
                std::popcount(pos[i].b.own | pos[i].b.opp), std::popcount(legal_moves(pos[i].b)));
    for (const auto& s : settings)
      std::printf(" %s: %s, %llu nodes;", s.config.c_str(), describe(s.expected[i]).c_str(),
                  static_cast<unsigned long long>(s.nodes[i]));
    std::printf("\n");
  }
  std::printf("\n");

  heddle_runtimes runtimes(threads);  // created once per thread count, outside the timed region
  tbb_arenas arenas(threads);
  std::map<std::string, heddle_counters> counters;  // "<variant> <threads>t <config>"

  std::vector<variant> vs;
  for (const auto& s : settings) {
    const heuristic h = s.h;
    const int d = s.depth;
    vs.push_back({"serial", 1, s.config, [&, h, d] {
                    return timed(
                        [&] {
                          std::vector<move_score> out;
                          for (const auto& p : pos) out.push_back(search_serial(p.b, d, h));
                          return out;
                        },
                        expect_results(s.expected, pos, "serial", 1, h, d));
                  }});
    for (unsigned t : threads) {
      auto& rt = runtimes[t];
      auto& arena = arenas[t];
      const std::string key = std::to_string(t) + "t " + s.config;
      // One submission per run, which searches the positions in turn: the same entry into the
      // runtime as oneTBB's one arena.execute.
      auto heddle_variant = [&, h, d](const char* name, move_score (*search)(const board&, int, heuristic)) {
        auto& c = counters[std::string(name) + " " + key];
        return variant{name, t, s.config, [&, h, d, name, search, t] {
                         return c(rt, [&] {
                           return timed(
                               [&] {
                                 return *rt.task([&] {
                                   std::vector<move_score> out;
                                   for (const auto& p : pos) out.push_back(search(p.b, d, h));
                                   return out;
                                 });
                               },
                               expect_results(s.expected, pos, name, t, h, d));
                         });
                       }};
      };
      vs.push_back(heddle_variant("heddle", &search_heddle));
      vs.push_back(heddle_variant("heddle task_group", &search_heddle_group));
      vs.push_back({tbb_name, t, s.config, [&, h, d, t] {
                      return timed(
                          [&] {
                            std::vector<move_score> out;
                            arena.execute([&] {
                              for (const auto& p : pos) out.push_back(search_tbb(p.b, d, h));
                            });
                            return out;
                          },
                          expect_results(s.expected, pos, tbb_name, t, h, d));
                    }});
    }
  }
  const auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, tbb_name).c_str());

  nlohmann::json depths = nlohmann::json::object(), nodes = nlohmann::json::object(), moves = nlohmann::json::object();
  for (const auto& s : settings) {
    const std::string hn = name(s.h);
    const double serial = find(rs, "serial", 1, s.config).median();
    std::printf("%s: %llu nodes per run (all positions), serial %.1f M nodes/s\n", s.config.c_str(),
                static_cast<unsigned long long>(s.total_nodes), double(s.total_nodes) / serial * 1e-6);
    depths[hn] = s.depth;
    nodes[hn] = s.nodes;
    nlohmann::json ms = nlohmann::json::array();
    for (const auto& r : s.expected) ms.push_back({{"move", square_name(r.move)}, {"score", r.score}});
    moves[hn] = ms;
  }
  std::printf("\n");

  const unsigned head = headline_threads(threads);
  for (const auto& s : settings) {
    const std::string hn = name(s.h);
    // heddle's futures over oneTBB's task_group, round by round (harness.hpp: paired_ratio); the
    // headline held to ≤ 1.05.
    auto ratio = [&](unsigned t) {
      return paired_ratio(find(rs, "heddle", t, s.config), find(rs, tbb_name, t, s.config));
    };
    add_figure(report, "othello_" + hn + "_vs_tbb", ratio(head),
               "heddle futures / oneTBB task_group, per round, " + s.config + ", " + std::to_string(head) +
                   (head == 1 ? " thread" : " threads") + " (the most that do not oversubscribe)",
               at_most(1.05));
    for (unsigned t : threads)
      add_figure(report, "othello_" + hn + "_" + std::to_string(t) + "t_vs_tbb", ratio(t),
                 "heddle futures / oneTBB task_group, per round, " + s.config + ", " + std::to_string(t) + " thread" +
                     (t == 1 ? "" : "s"));
  }
  std::printf("\n");

  const nlohmann::json stats = print_counters(counters);
  add_suite(report, "othello", rs,
            {{"depths", depths},
             {"positions", n_positions},
             {"playout_plies", playout_plies},
             {"serial_plies", serial_plies},
             {"nodes_per_position", nodes},
             {"best_moves", moves},
             {"reps", opt.reps},
             {"heddle_counters_per_run", stats}});
}

const registration reg{{"othello", 5,
                        "Othello minimax to depth d, tasks down to d-2, simple and strategic heuristics: heddle, "
                        "oneTBB task_group, serial",
                        &run}};

}  // namespace

}  // namespace heddle::bench::othello
