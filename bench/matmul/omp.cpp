// SPDX-License-Identifier: Apache-2.0
#include "matmul.hpp"

namespace heddle::bench::matmul {

namespace {

void multiply_tasks(double* C, const double* A, const double* B, std::size_t n, std::size_t ld) {
  if (n <= leaf) return multiply_leaf(C, A, B, ld);
  const std::size_t h = n / 2;
  for (int round = 0; round < 2; ++round) {
    const auto p = round_products(C, A, B, h, ld, round);
    // Products 3, 2, 1 are tasks, product 0 runs here, as in heddle.cpp and tbb.cpp.
    for (int i = 3; i >= 1; --i) {
      const product q = p[i];
#pragma omp task firstprivate(q, h, ld)
      multiply_tasks(q.c, q.a, q.b, h, ld);
    }
    multiply_tasks(p[0].c, p[0].a, p[0].b, h, ld);
#pragma omp taskwait
  }
}

}  // namespace

void multiply_omp(double* C, const double* A, const double* B, std::size_t n, std::size_t ld, unsigned threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  multiply_tasks(C, A, B, n, ld);
}

}  // namespace heddle::bench::matmul
