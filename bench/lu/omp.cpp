// SPDX-License-Identifier: Apache-2.0
#include "lu.hpp"

namespace heddle::bench::lu {

namespace omp_impl {
namespace {

void schur(blocks M, blocks V, blocks W) {
  if (M.nb == 1) return block_schur(M.p, V.p, W.p);
  for (std::size_t r = 0; r < 2; ++r) {
    // The first call here, the others as tasks created last first (see heddle.cpp).
#pragma omp task firstprivate(M, V, W, r)
    schur(M.q(1, 1), V.q(1, r), W.q(r, 1));
#pragma omp task firstprivate(M, V, W, r)
    schur(M.q(1, 0), V.q(1, r), W.q(r, 0));
#pragma omp task firstprivate(M, V, W, r)
    schur(M.q(0, 1), V.q(0, r), W.q(r, 1));
    schur(M.q(0, 0), V.q(0, r), W.q(r, 0));
#pragma omp taskwait
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
#pragma omp task firstprivate(M, L)
  lower_column(M.q(0, 1), M.q(1, 1), L);
  lower_column(M.q(0, 0), M.q(1, 0), L);
#pragma omp taskwait
}

void upper_row(blocks Ma, blocks Mb, blocks U) {
  upper_solve(Ma, U.q(0, 0));
  schur(Mb, Ma, U.q(0, 1));
  upper_solve(Mb, U.q(1, 1));
}

void upper_solve(blocks M, blocks U) {
  if (M.nb == 1) return block_upper_solve(M.p, U.p);
#pragma omp task firstprivate(M, U)
  upper_row(M.q(1, 0), M.q(1, 1), U);
  upper_row(M.q(0, 0), M.q(0, 1), U);
#pragma omp taskwait
}

void factor(blocks M) {
  if (M.nb == 1) return block_lu(M.p);
  factor(M.q(0, 0));
#pragma omp task firstprivate(M)
  upper_solve(M.q(1, 0), M.q(0, 0));
  lower_solve(M.q(0, 1), M.q(0, 0));
#pragma omp taskwait
  schur(M.q(1, 1), M.q(1, 0), M.q(0, 1));
  factor(M.q(1, 1));
}

}  // namespace
}  // namespace omp_impl

void lu_omp(blocks M, unsigned threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  omp_impl::factor(M);
}

}  // namespace heddle::bench::lu
