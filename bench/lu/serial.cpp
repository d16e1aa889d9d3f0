// SPDX-License-Identifier: Apache-2.0
#include "lu.hpp"

namespace heddle::bench::lu {

namespace serial_impl {
namespace {

// M −= V·W: two rounds of four quadrant products (those of a round write different quadrants).
void schur(blocks M, blocks V, blocks W) {
  if (M.nb == 1) return block_schur(M.p, V.p, W.p);
  for (std::size_t r = 0; r < 2; ++r) {
    schur(M.q(0, 0), V.q(0, r), W.q(r, 0));
    schur(M.q(0, 1), V.q(0, r), W.q(r, 1));
    schur(M.q(1, 0), V.q(1, r), W.q(r, 0));
    schur(M.q(1, 1), V.q(1, r), W.q(r, 1));
  }
}

void lower_solve(blocks M, blocks L);
void upper_solve(blocks M, blocks U);

// One block column [Ma; Mb] of L⁻¹·M.
void lower_column(blocks Ma, blocks Mb, blocks L) {
  lower_solve(Ma, L.q(0, 0));
  schur(Mb, L.q(1, 0), Ma);
  lower_solve(Mb, L.q(1, 1));
}

// M = L⁻¹·M: its two block columns are independent.
void lower_solve(blocks M, blocks L) {
  if (M.nb == 1) return block_lower_solve(M.p, L.p);
  lower_column(M.q(0, 0), M.q(1, 0), L);
  lower_column(M.q(0, 1), M.q(1, 1), L);
}

// One block row [Ma Mb] of M·U⁻¹.
void upper_row(blocks Ma, blocks Mb, blocks U) {
  upper_solve(Ma, U.q(0, 0));
  schur(Mb, Ma, U.q(0, 1));
  upper_solve(Mb, U.q(1, 1));
}

// M = M·U⁻¹: its two block rows are independent.
void upper_solve(blocks M, blocks U) {
  if (M.nb == 1) return block_upper_solve(M.p, U.p);
  upper_row(M.q(0, 0), M.q(0, 1), U);
  upper_row(M.q(1, 0), M.q(1, 1), U);
}

}  // namespace
}  // namespace serial_impl

void lu_serial(blocks M) {
  if (M.nb == 1) return block_lu(M.p);
  lu_serial(M.q(0, 0));
  serial_impl::lower_solve(M.q(0, 1), M.q(0, 0));
  serial_impl::upper_solve(M.q(1, 0), M.q(0, 0));
  serial_impl::schur(M.q(1, 1), M.q(1, 0), M.q(0, 1));
  lu_serial(M.q(1, 1));
}

}  // namespace heddle::bench::lu
