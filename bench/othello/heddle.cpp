// SPDX-License-Identifier: Apache-2.0
// heddle: a task per child above the serial plies. The last child runs inline, the others are
// spawned first so that thieves find them while this worker is busy.
#include <heddle/heddle.hpp>

#include "search.hpp"

namespace heddle::bench::othello {

// Futures: a future per spawned child, forced newest first. The newest is at the bottom of this
// worker's deque, so unless it was stolen forcing pops it and runs it inline.
move_score search_heddle(const board& b, int depth, heuristic h) {
  if (depth <= serial_plies) return search_serial(b, depth, h);
  children c;
  expand(b, c);
  if (c.n == 0) {
    if (game_over(b)) return {-1, final_score(b)};
    return {-1, -search_heddle(pass(b), depth - 1, h).score};
  }
  heddle::future<int> f[max_moves];
  for (int i = 0; i + 1 < c.n; ++i)
    f[i] = heddle::task([child = c.pos[i], depth, h] { return -search_heddle(child, depth - 1, h).score; });
  int score[max_moves];
  score[c.n - 1] = -search_heddle(c.pos[c.n - 1], depth - 1, h).score;
  for (int i = c.n - 2; i >= 0; --i) score[i] = *f[i];
  return choose(c, score);
}

// The oneTBB shape (tbb.cpp) on heddle's task_group: each task writes its child's score.
move_score search_heddle_group(const board& b, int depth, heuristic h) {
  if (depth <= serial_plies) return search_serial(b, depth, h);
  children c;
  expand(b, c);
  if (c.n == 0) {
    if (game_over(b)) return {-1, final_score(b)};
    return {-1, -search_heddle_group(pass(b), depth - 1, h).score};
  }
  int score[max_moves];
  heddle::task_group g;
  for (int i = 0; i + 1 < c.n; ++i)
    g.run([&c, &score, i, depth, h] { score[i] = -search_heddle_group(c.pos[i], depth - 1, h).score; });
  score[c.n - 1] = -search_heddle_group(c.pos[c.n - 1], depth - 1, h).score;
  g.wait();
  return choose(c, score);
}

}  // namespace heddle::bench::othello
