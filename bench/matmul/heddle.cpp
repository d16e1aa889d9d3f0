// SPDX-License-Identifier: Apache-2.0
#include <heddle/heddle.hpp>

#include "matmul.hpp"

namespace heddle::bench::matmul {

// Products 1–3 of a round are tasks and product 0 runs here; forcing the futures ends the round
// (popping from this worker's deque the tasks nobody stole). The tasks are pushed last first, so a
// worker left alone runs the products in the serial order; a thief takes the oldest, product 3.
void multiply_heddle(double* C, const double* A, const double* B, std::size_t n, std::size_t ld) {
  if (n <= leaf) return multiply_leaf(C, A, B, ld);
  const std::size_t h = n / 2;
  for (int round = 0; round < 2; ++round) {
    const auto p = round_products(C, A, B, h, ld, round);
    auto p3 = heddle::task(multiply_heddle, p[3].c, p[3].a, p[3].b, h, ld);
    auto p2 = heddle::task(multiply_heddle, p[2].c, p[2].a, p[2].b, h, ld);
    auto p1 = heddle::task(multiply_heddle, p[1].c, p[1].a, p[1].b, h, ld);
    multiply_heddle(p[0].c, p[0].a, p[0].b, h, ld);
    *p1;
    *p2;
    *p3;
  }
}

}  // namespace heddle::bench::matmul
