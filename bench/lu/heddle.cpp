// SPDX-License-Identifier: Apache-2.0
#include <heddle/heddle.hpp>

#include "lu.hpp"

namespace heddle::bench::lu {

namespace heddle_impl {
namespace {

// Where Cilk spawns a group of calls, the first call runs here and the others are tasks, pushed
// last first: a worker left alone pops them in the serial order, a thief takes the last one. Forcing
// the futures is Cilk's sync (and runs the tasks nobody stole, from this worker's deque).
void schur(blocks M, blocks V, blocks W) {
  if (M.nb == 1) return block_schur(M.p, V.p, W.p);
  for (std::size_t r = 0; r < 2; ++r) {
    auto m11 = heddle::task(schur, M.q(1, 1), V.q(1, r), W.q(r, 1));
    auto m10 = heddle::task(schur, M.q(1, 0), V.q(1, r), W.q(r, 0));
    auto m01 = heddle::task(schur, M.q(0, 1), V.q(0, r), W.q(r, 1));
    schur(M.q(0, 0), V.q(0, r), W.q(r, 0));
    *m01;
    *m10;
    *m11;
  }
}

void lower_solve(blocks M, blocks L);
void upper_solve(blocks M, blocks U);

void lower_column(blocks Ma, blocks Mb, blocks L) {
  lower_solve(Ma, L.q(0, 0));
  schur(Mb, L.q(1, 0), Ma);
  lower_solve(Mb, L.q(1, 1));
}

void lower_solve(blocks M, blocks L) {
  if (M.nb == 1) return block_lower_solve(M.p, L.p);
  auto right = heddle::task(lower_column, M.q(0, 1), M.q(1, 1), L);
  lower_column(M.q(0, 0), M.q(1, 0), L);
  *right;
}

void upper_row(blocks Ma, blocks Mb, blocks U) {
  upper_solve(Ma, U.q(0, 0));
  schur(Mb, Ma, U.q(0, 1));
  upper_solve(Mb, U.q(1, 1));
}

void upper_solve(blocks M, blocks U) {
  if (M.nb == 1) return block_upper_solve(M.p, U.p);
  auto bottom = heddle::task(upper_row, M.q(1, 0), M.q(1, 1), U);
  upper_row(M.q(0, 0), M.q(0, 1), U);
  *bottom;
}

}  // namespace
}  // namespace heddle_impl

void lu_heddle(blocks M) {
  if (M.nb == 1) return block_lu(M.p);
  lu_heddle(M.q(0, 0));
  auto below = heddle::task(heddle_impl::upper_solve, M.q(1, 0), M.q(0, 0));
  heddle_impl::lower_solve(M.q(0, 1), M.q(0, 0));
  *below;
  heddle_impl::schur(M.q(1, 1), M.q(1, 0), M.q(0, 1));
  lu_heddle(M.q(1, 1));
}

}  // namespace heddle::bench::lu
