// SPDX-License-Identifier: Apache-2.0
// matmul: C += A·B on n×n row-major doubles by the divide-and-conquer of the Cilk examples. Each
// call splits C, A and B into quadrants and does the eight half-size products in two rounds of
// four: the products of one round write different quadrants of C, so they run in parallel; the
// second round adds to the same quadrants and starts after the first has finished. A product of
// leaf×leaf blocks is the serial kernel (kernel.cpp), the same machine code for every runtime.
// One file per runtime, side by side: heddle.cpp, tbb.cpp, omp.cpp, serial.cpp; suite.cpp times them.
#pragma once

#include <array>
#include <cstddef>

namespace heddle::bench::matmul {

// The leaf: 32×32 (8 KiB per operand). On the development VM (AMD EPYC, SSE2 code) the kernel ran
// at ~14 GFLOP/s serially with 32 and 64 alike and at ~8 with 16; 32 gives each thread 8× more
// pieces to balance than 64.
inline constexpr std::size_t leaf = 32;

// C += A·B for the leaf×leaf blocks at C, A, B, rows ld apart. For each element of C the products
// are added in increasing k, so every runtime computes bitwise the same C.
void multiply_leaf(double* C, const double* A, const double* B, std::size_t ld) noexcept;

// One of the four products of a round: c += a·b on h×h blocks.
struct product {
  double* c;
  const double* a;
  const double* b;
};

// The four products of round 0 (C_ij += A_i0·B_0j) or round 1 (C_ij += A_i1·B_1j), quadrants h wide.
inline std::array<product, 4> round_products(double* C, const double* A, const double* B, std::size_t h, std::size_t ld,
                                             int round) {
  const std::size_t down = h * ld;
  const double* a_i0 = A + std::size_t(round) * h;     // A_0r
  const double* a_i1 = a_i0 + down;                    // A_1r
  const double* b_0j = B + std::size_t(round) * down;  // B_r0
  const double* b_1j = b_0j + h;                       // B_r1
  return {{{C, a_i0, b_0j}, {C + h, a_i0, b_1j}, {C + down, a_i1, b_0j}, {C + down + h, a_i1, b_1j}}};
}

// C += A·B for n×n blocks (n = leaf·2^k), rows ld apart.
void multiply_serial(double* C, const double* A, const double* B, std::size_t n, std::size_t ld);
void multiply_heddle(double* C, const double* A, const double* B, std::size_t n, std::size_t ld);  // on a worker
void multiply_tbb(double* C, const double* A, const double* B, std::size_t n, std::size_t ld);     // in an arena
// Makes a team of `threads` and multiplies on it.
void multiply_omp(double* C, const double* A, const double* B, std::size_t n, std::size_t ld, unsigned threads);

}  // namespace heddle::bench::matmul
