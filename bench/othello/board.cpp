// SPDX-License-Identifier: Apache-2.0
#include "board.hpp"

#include <random>

namespace heddle::bench::othello {

board initial_board() {
  const auto bit = [](int s) { return std::uint64_t{1} << s; };
  return {bit(35) | bit(28), bit(27) | bit(36)};  // dark d5 e4, light d4 e5
}

const char* name(heuristic h) { return h == heuristic::simple ? "simple" : "strategic"; }

board playout(std::uint32_t seed, int plies) {
  std::mt19937 rng(seed);
  board b = initial_board();
  for (int p = 0; p < plies; ++p) {
    std::uint64_t m = legal_moves(b);
    if (!m) {
      if (!legal_moves(pass(b))) break;
      b = pass(b);
      continue;
    }
    for (auto k = rng() % std::uint32_t(std::popcount(m)); k; --k) m &= m - 1;
    b = play(b, std::countr_zero(m));
  }
  return b;
}

std::string square_name(int square) {
  if (square < 0) return "pass";
  return {char('a' + square % 8), char('1' + square / 8)};
}

std::string to_string(const board& b) {
  std::string s;
  for (int r = 7; r >= 0; --r) {
    for (int c = 0; c < 8; ++c) {
      const auto bit = std::uint64_t{1} << (8 * r + c);
      s += (b.own & bit) ? 'X' : (b.opp & bit) ? 'O' : '.';
    }
    s += '\n';
  }
  return s;
}

}  // namespace heddle::bench::othello
