// SPDX-License-Identifier: Apache-2.0
#include <tbb/task_group.h>

#include "lu.hpp"

namespace heddle::bench::lu {

namespace tbb_impl {
namespace {

void schur(blocks M, blocks V, blocks W) {
  if (M.nb == 1) return block_schur(M.p, V.p, W.p);
  tbb::task_group g;  // the first call here, the others as tasks pushed last first (see heddle.cpp)
  for (std::size_t r = 0; r < 2; ++r) {
    g.run([=] { schur(M.q(1, 1), V.q(1, r), W.q(r, 1)); });
    g.run([=] { schur(M.q(1, 0), V.q(1, r), W.q(r, 0)); });
    g.run([=] { schur(M.q(0, 1), V.q(0, r), W.q(r, 1)); });
    schur(M.q(0, 0), V.q(0, r), W.q(r, 0));
    g.wait();
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
  tbb::task_group g;
  g.run([=] { lower_column(M.q(0, 1), M.q(1, 1), L); });
  lower_column(M.q(0, 0), M.q(1, 0), L);
  g.wait();
}

void upper_row(blocks Ma, blocks Mb, blocks U) {
  upper_solve(Ma, U.q(0, 0));
  schur(Mb, Ma, U.q(0, 1));
  upper_solve(Mb, U.q(1, 1));
}

void upper_solve(blocks M, blocks U) {
  if (M.nb == 1) return block_upper_solve(M.p, U.p);
  tbb::task_group g;
  g.run([=] { upper_row(M.q(1, 0), M.q(1, 1), U); });
  upper_row(M.q(0, 0), M.q(0, 1), U);
  g.wait();
}

}  // namespace
}  // namespace tbb_impl

void lu_tbb(blocks M) {
  if (M.nb == 1) return block_lu(M.p);
  lu_tbb(M.q(0, 0));
  tbb::task_group g;
  g.run([=] { tbb_impl::upper_solve(M.q(1, 0), M.q(0, 0)); });
  tbb_impl::lower_solve(M.q(0, 1), M.q(0, 0));
  g.wait();
  tbb_impl::schur(M.q(1, 1), M.q(1, 0), M.q(0, 1));
  lu_tbb(M.q(1, 1));
}

}  // namespace heddle::bench::lu
