// SPDX-License-Identifier: Apache-2.0
// The block operations, compiled once for every runtime. Inner loops run along rows (contiguous),
// so the compiler vectorizes them; `block` is a constant, so it also unrolls them.
#include "lu.hpp"

namespace heddle::bench::lu {

void block_lu(double* __restrict B) noexcept {
  for (std::size_t k = 0; k < block; ++k) {
    const double* __restrict row_k = B + k * block;
    for (std::size_t i = k + 1; i < block; ++i) {
      double* __restrict row_i = B + i * block;
      const double l = row_i[k] / row_k[k];
      row_i[k] = l;
      for (std::size_t j = k + 1; j < block; ++j) row_i[j] -= l * row_k[j];
    }
  }
}

void block_lower_solve(double* __restrict B, const double* __restrict L) noexcept {
  for (std::size_t i = 1; i < block; ++i) {
    double* __restrict row_i = B + i * block;
    for (std::size_t k = 0; k < i; ++k) {
      const double l = L[i * block + k];
      const double* __restrict row_k = B + k * block;
      for (std::size_t j = 0; j < block; ++j) row_i[j] -= l * row_k[j];
    }
  }
}

void block_upper_solve(double* __restrict B, const double* __restrict U) noexcept {
  for (std::size_t i = 0; i < block; ++i) {
    double* __restrict row_i = B + i * block;
    for (std::size_t k = 0; k < block; ++k) {
      const double x = row_i[k] / U[k * block + k];
      row_i[k] = x;
      const double* __restrict u = U + k * block;
      for (std::size_t j = k + 1; j < block; ++j) row_i[j] -= x * u[j];
    }
  }
}

void block_schur(double* __restrict B, const double* __restrict A, const double* __restrict C) noexcept {
  for (std::size_t i = 0; i < block; ++i) {
    double* __restrict row_i = B + i * block;
    for (std::size_t k = 0; k < block; ++k) {
      const double a = A[i * block + k];
      const double* __restrict c = C + k * block;
      for (std::size_t j = 0; j < block; ++j) row_i[j] -= a * c[j];
    }
  }
}

}  // namespace heddle::bench::lu
