// SPDX-License-Identifier: Apache-2.0
// Othello on bitboards, shared by every variant of the suite: move generation, flips, the two
// heuristics and the mid-game positions. A board is seen from the side to move (negamax form), so
// playing a move swaps the two sides.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace heddle::bench::othello {

// Square s = 8 · row + column; row 0 is rank 1 ("a1" is bit 0, "h8" bit 63).
struct board {
  std::uint64_t own = 0;  // discs of the side to move
  std::uint64_t opp = 0;  // discs of the other side
  friend bool operator==(const board&, const board&) = default;
};

// Dark (the first to move) on d5 and e4, light on d4 and e5; dark to move.
board initial_board();

namespace detail {
constexpr std::uint64_t not_a = 0xfefefefefefefefeULL;  // every column but a
constexpr std::uint64_t not_h = 0x7f7f7f7f7f7f7f7fULL;  // every column but h

// One step in direction D (0..7: E, W, N, S, NE, NW, SE, SW), dropping what wraps around an edge.
template <int D>
constexpr std::uint64_t step(std::uint64_t x) {
  if constexpr (D == 0) return (x << 1) & not_a;
  else if constexpr (D == 1) return (x >> 1) & not_h;
  else if constexpr (D == 2) return x << 8;
  else if constexpr (D == 3) return x >> 8;
  else if constexpr (D == 4) return (x << 9) & not_a;
  else if constexpr (D == 5) return (x << 7) & not_h;
  else if constexpr (D == 6) return (x >> 7) & not_a;
  else return (x >> 9) & not_h;
}

// Empty squares reached from an own disc over a run of opposing discs in direction D.
template <int D>
constexpr std::uint64_t moves_toward(std::uint64_t own, std::uint64_t opp, std::uint64_t empty) {
  std::uint64_t t = step<D>(own) & opp;
  for (int i = 0; i < 5; ++i) t |= step<D>(t) & opp;  // a run is at most six discs long
  return step<D>(t) & empty;
}

// The discs a disc put on `m` (one bit) flips in direction D.
template <int D>
constexpr std::uint64_t flips_toward(std::uint64_t own, std::uint64_t opp, std::uint64_t m) {
  std::uint64_t f = 0;
  std::uint64_t x = step<D>(m);
  while (x & opp) {
    f |= x;
    x = step<D>(x);
  }
  return (x & own) ? f : 0;
}
}  // namespace detail

// Every legal move of the side to move, one bit per square.
constexpr std::uint64_t legal_moves(const board& b) {
  using namespace detail;
  const std::uint64_t empty = ~(b.own | b.opp);
  return moves_toward<0>(b.own, b.opp, empty) | moves_toward<1>(b.own, b.opp, empty) |
         moves_toward<2>(b.own, b.opp, empty) | moves_toward<3>(b.own, b.opp, empty) |
         moves_toward<4>(b.own, b.opp, empty) | moves_toward<5>(b.own, b.opp, empty) |
         moves_toward<6>(b.own, b.opp, empty) | moves_toward<7>(b.own, b.opp, empty);
}

// The position after the side to move plays the legal move `square`, seen from the other side.
constexpr board play(const board& b, int square) {
  using namespace detail;
  const std::uint64_t m = std::uint64_t{1} << square;
  const std::uint64_t f = flips_toward<0>(b.own, b.opp, m) | flips_toward<1>(b.own, b.opp, m) |
                          flips_toward<2>(b.own, b.opp, m) | flips_toward<3>(b.own, b.opp, m) |
                          flips_toward<4>(b.own, b.opp, m) | flips_toward<5>(b.own, b.opp, m) |
                          flips_toward<6>(b.own, b.opp, m) | flips_toward<7>(b.own, b.opp, m);
  return {b.opp & ~f, b.own | f | m};
}

// The side to move has no move and passes.
constexpr board pass(const board& b) { return {b.opp, b.own}; }

// Neither side can move.
constexpr bool game_over(const board& b) { return legal_moves(b) == 0 && legal_moves(pass(b)) == 0; }

// Population count without a library call: the default x86-64 target has no popcnt instruction,
// and std::popcount then calls libgcc's __popcountdi2 (a fifth of a simple-heuristic search).
constexpr int discs(std::uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return int((x * 0x0101010101010101ULL) >> 56);
}

// The score of a finished game: the disc difference, scaled above anything a heuristic returns, so
// that a won game beats every unfinished one.
constexpr int final_score(const board& b) { return 10000 * (discs(b.own) - discs(b.opp)); }

enum class heuristic { simple, strategic };
const char* name(heuristic h);

// The simple heuristic: disc difference.
constexpr int evaluate_simple(const board& b) { return discs(b.own) - discs(b.opp); }

namespace detail {
// The classic square weights: corners high, the squares next to corners (which give corners
// away) negative, edges above the centre.
inline constexpr int weights[8][8] = {{100, -20, 10, 5, 5, 10, -20, 100},   {-20, -50, -2, -2, -2, -2, -50, -20},
                                      {10, -2, -1, -1, -1, -1, -2, 10},     {5, -2, -1, -1, -1, -1, -2, 5},
                                      {5, -2, -1, -1, -1, -1, -2, 5},       {10, -2, -1, -1, -1, -1, -2, 10},
                                      {-20, -50, -2, -2, -2, -2, -50, -20}, {100, -20, 10, 5, 5, 10, -20, 100}};

// row_weight[r][bits]: the summed weights of the squares of row r whose bits are set.
struct row_weights {
  int w[8][256];
};
constexpr row_weights make_row_weights() {
  row_weights t{};
  for (int r = 0; r < 8; ++r)
    for (int bits = 0; bits < 256; ++bits)
      for (int c = 0; c < 8; ++c)
        if (bits >> c & 1) t.w[r][bits] += weights[r][c];
  return t;
}
inline constexpr row_weights row_weight = make_row_weights();

constexpr int weigh(std::uint64_t discs) {
  int s = 0;
  for (int r = 0; r < 8; ++r) s += row_weight.w[r][(discs >> (8 * r)) & 0xff];
  return s;
}
}  // namespace detail

// The strategic heuristic: weighted squares, own minus the other side's. |value| < 10000.
constexpr int evaluate_strategic(const board& b) { return detail::weigh(b.own) - detail::weigh(b.opp); }

template <heuristic H>
constexpr int evaluate(const board& b) {
  if constexpr (H == heuristic::simple) return evaluate_simple(b);
  else return evaluate_strategic(b);
}

// A mid-game position: `plies` moves from the initial board, each chosen by a std::mt19937 seeded
// with `seed` as the (rng() % moves)-th legal move in square order (portable: no distribution
// object, whose output the standard leaves to the library). A side without a move passes.
board playout(std::uint32_t seed, int plies);

// "a1".."h8".
std::string square_name(int square);

// The board drawn in text, X for the side to move: for the suite's report.
std::string to_string(const board& b);

}  // namespace heddle::bench::othello
