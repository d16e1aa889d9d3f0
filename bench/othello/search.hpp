// SPDX-License-Identifier: Apache-2.0
// Minimax search in negamax form, to a fixed depth, without alpha-beta: the tree is the same
// whatever the order in which the children finish, so every variant searches the same nodes and
// returns the same move and score (TaskMan §6.1.3). Tasks are spawned for every node down to
// depth d − serial_plies (the root is depth 0); the last serial_plies plies below are the one serial
// function search_serial, the same in every variant. Only the spawning differs: heddle.cpp,
// tbb.cpp; serial.cpp holds the serial search.
//
// Rules: a side with no move passes (a pass is a ply); when neither side can move the game is over
// and scores final_score(). The best move is the first (lowest square) of the best score.
#pragma once

#include <bit>
#include <cstdint>

#include "board.hpp"

namespace heddle::bench::othello {

// The plies below the last task-spawning level.
inline constexpr int serial_plies = 2;

struct move_score {
  int move = -1;  // the square to play, −1 for a pass or at depth 0
  int score = 0;  // for the side to move
  friend bool operator==(const move_score&, const move_score&) = default;
};

// More than the most moves any position has (33 in a reachable one; 60 empty squares at most).
inline constexpr int max_moves = 64;

// The children of a position in the fixed move order (ascending square).
struct children {
  int n = 0;
  int square[max_moves];
  board pos[max_moves];
};

inline void expand(const board& b, children& c) {
  c.n = 0;
  for (std::uint64_t m = legal_moves(b); m; m &= m - 1) {
    const int s = std::countr_zero(m);
    c.square[c.n] = s;
    c.pos[c.n] = play(b, s);
    ++c.n;
  }
}

// The first best of the children's scores (already negated: from the parent's side).
inline move_score choose(const children& c, const int* score) {
  move_score best{c.square[0], score[0]};
  for (int i = 1; i < c.n; ++i)
    if (score[i] > best.score) best = {c.square[i], score[i]};
  return best;
}

// The serial search, every variant's below depth d − serial_plies (serial.cpp).
move_score search_serial(const board& b, int depth, heuristic h);

// Positions searched by search_serial(b, depth): every node, the root and the leaves included.
std::uint64_t count_nodes(const board& b, int depth);

// The parallel searches: each child of a node above the serial plies is a task.
move_score search_heddle(const board& b, int depth, heuristic h);        // futures, forced with *
move_score search_heddle_group(const board& b, int depth, heuristic h);  // heddle::task_group
move_score search_tbb(const board& b, int depth, heuristic h);           // tbb::task_group

}  // namespace heddle::bench::othello
