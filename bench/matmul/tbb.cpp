// SPDX-License-Identifier: Apache-2.0
#include <tbb/task_group.h>

#include "matmul.hpp"

namespace heddle::bench::matmul {

void multiply_tbb(double* C, const double* A, const double* B, std::size_t n, std::size_t ld) {
  if (n <= leaf) return multiply_leaf(C, A, B, ld);
  const std::size_t h = n / 2;
  tbb::task_group g;
  for (int round = 0; round < 2; ++round) {
    const auto p = round_products(C, A, B, h, ld, round);
    // Products 3, 2, 1 are tasks (a lone thread pops them in the serial order), product 0 runs here.
    for (int i = 3; i >= 1; --i) g.run([q = p[i], h, ld] { multiply_tbb(q.c, q.a, q.b, h, ld); });
    multiply_tbb(p[0].c, p[0].a, p[0].b, h, ld);
    g.wait();
  }
}

}  // namespace heddle::bench::matmul
