// SPDX-License-Identifier: Apache-2.0
#include "matmul.hpp"

namespace heddle::bench::matmul {

void multiply_serial(double* C, const double* A, const double* B, std::size_t n, std::size_t ld) {
  if (n <= leaf) return multiply_leaf(C, A, B, ld);
  const std::size_t h = n / 2;
  for (int round = 0; round < 2; ++round)
    for (const product& p : round_products(C, A, B, h, ld, round)) multiply_serial(p.c, p.a, p.b, h, ld);
}

}  // namespace heddle::bench::matmul
