// SPDX-License-Identifier: Apache-2.0
// lu: LU decomposition without pivoting of a diagonally dominant n×n matrix by Cilk's recursive
// block algorithm (lu.cilk, Blumofe). The matrix is stored as nb×nb blocks of block×block doubles,
// each block contiguous. lu(M): lu(M00); then in parallel lower_solve(M01, M00) and
// upper_solve(M10, M00); schur(M11, M10, M01), i.e. M11 −= M10·M01, itself a recursive parallel
// product; lu(M11). The block operations (kernel.cpp) are the same machine code in every runtime and
// every element sees the same operations in the same order, so every runtime computes bitwise the
// same factors. One file per runtime: heddle.cpp, tbb.cpp, omp.cpp, serial.cpp; suite.cpp times them.
#pragma once

#include <cstddef>

namespace heddle::bench::lu {

// The leaf block edge, by measurement: Cilk used 16, but on the development VM (AMD EPYC, SSE2 code)
// the serial factorization of 1024×1024 and 2048×2048 ran at ~4.7 GFLOP/s with 16, ~18 with 32,
// ~15 with 64 and ~13 with 128.
inline constexpr std::size_t block = 32;
inline constexpr std::size_t block_elems = block * block;

// A square part of the blocked matrix: nb×nb blocks from `p`, the whole matrix `stride` blocks wide.
struct blocks {
  double* p;
  std::size_t nb;
  std::size_t stride;
  // Quadrant (i, j), i and j in {0, 1}.
  blocks q(std::size_t i, std::size_t j) const {
    const std::size_t h = nb / 2;
    return {p + (i * h * stride + j * h) * block_elems, h, stride};
  }
};

// Block operations on single blocks.
void block_lu(double* B) noexcept;                                       // B = L·U in place (L unit)
void block_lower_solve(double* B, const double* L) noexcept;             // B = L⁻¹·B (L unit lower)
void block_upper_solve(double* B, const double* U) noexcept;             // B = B·U⁻¹ (U upper)
void block_schur(double* B, const double* A, const double* C) noexcept;  // B −= A·C

// The factorization of M (nb a power of two) in place: L below the diagonal (unit diagonal not
// stored), U on and above it.
void lu_serial(blocks M);
void lu_heddle(blocks M);                 // on a worker
void lu_tbb(blocks M);                    // in an arena
void lu_omp(blocks M, unsigned threads);  // makes a team

}  // namespace heddle::bench::lu
