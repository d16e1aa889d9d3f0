// SPDX-License-Identifier: Apache-2.0
// The serial search: the whole tree for the serial variant, and the subtrees below the last
// task-spawning level for the parallel ones.
#include "search.hpp"

namespace heddle::bench::othello {

namespace {

template <heuristic H>
int negamax(const board& b, int depth) {
  if (depth == 0) return evaluate<H>(b);
  std::uint64_t m = legal_moves(b);
  if (!m) {
    if (!legal_moves(pass(b))) return final_score(b);
    return -negamax<H>(pass(b), depth - 1);
  }
  int best = -negamax<H>(play(b, std::countr_zero(m)), depth - 1);
  for (m &= m - 1; m; m &= m - 1) {
    const int v = -negamax<H>(play(b, std::countr_zero(m)), depth - 1);
    if (v > best) best = v;
  }
  return best;
}

template <heuristic H>
move_score search(const board& b, int depth) {
  if (depth == 0) return {-1, evaluate<H>(b)};
  children c;
  expand(b, c);
  if (c.n == 0) {
    if (game_over(b)) return {-1, final_score(b)};
    return {-1, -negamax<H>(pass(b), depth - 1)};
  }
  int score[max_moves];
  for (int i = 0; i < c.n; ++i) score[i] = -negamax<H>(c.pos[i], depth - 1);
  return choose(c, score);
}

}  // namespace

move_score search_serial(const board& b, int depth, heuristic h) {
  return h == heuristic::simple ? search<heuristic::simple>(b, depth) : search<heuristic::strategic>(b, depth);
}

std::uint64_t count_nodes(const board& b, int depth) {
  if (depth == 0) return 1;
  std::uint64_t m = legal_moves(b);
  if (!m) return legal_moves(pass(b)) ? 1 + count_nodes(pass(b), depth - 1) : 1;
  std::uint64_t n = 1;
  for (; m; m &= m - 1) n += count_nodes(play(b, std::countr_zero(m)), depth - 1);
  return n;
}

}  // namespace heddle::bench::othello
