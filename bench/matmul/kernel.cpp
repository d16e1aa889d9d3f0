// SPDX-License-Identifier: Apache-2.0
// The leaf product, compiled once so that every runtime runs the same instructions (and rounds alike).
#include "matmul.hpp"

namespace heddle::bench::matmul {

void multiply_leaf(double* __restrict C, const double* __restrict A, const double* __restrict B,
                   std::size_t ld) noexcept {
  // i-k-j order: the inner loop streams a row of B into a row of C (vectorized along j).
  for (std::size_t i = 0; i < leaf; ++i) {
    double* __restrict c = C + i * ld;
    for (std::size_t k = 0; k < leaf; ++k) {
      const double a = A[i * ld + k];
      const double* __restrict b = B + k * ld;
      for (std::size_t j = 0; j < leaf; ++j) c[j] += a * b[j];
    }
  }
}

}  // namespace heddle::bench::matmul
