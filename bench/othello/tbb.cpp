// SPDX-License-Identifier: Apache-2.0
// oneTBB: a task per child above the serial plies with tbb::task_group; the last child runs inline.
#include <tbb/task_group.h>

#include "search.hpp"

namespace heddle::bench::othello {

move_score search_tbb(const board& b, int depth, heuristic h) {
  if (depth <= serial_plies) return search_serial(b, depth, h);
  children c;
  expand(b, c);
  if (c.n == 0) {
    if (game_over(b)) return {-1, final_score(b)};
    return {-1, -search_tbb(pass(b), depth - 1, h).score};
  }
  int score[max_moves];
  tbb::task_group g;
  for (int i = 0; i + 1 < c.n; ++i)
    g.run([&c, &score, i, depth, h] { score[i] = -search_tbb(c.pos[i], depth - 1, h).score; });
  score[c.n - 1] = -search_tbb(c.pos[c.n - 1], depth - 1, h).score;
  g.wait();
  return choose(c, score);
}

}  // namespace heddle::bench::othello
