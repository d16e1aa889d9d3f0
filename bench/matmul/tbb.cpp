#include <tbb/task_group.h>

#include "matmul.hpp"

namespace heddle::bench::matmul {

void multiply_tbb(double* C, const double* A, const double* B, std::size_t n, std::size_t ld) {
  if (n <= leaf) return multiply_leaf(C, A, B, ld);
  const std::size_t h = n / 2;
  tbb::task_group g;
  for (int round = 0; round < 2; ++round) {
    const auto p = round_products(C, A, B, h, ld, round);
    for (int i = 0; i < 3; ++i) g.run([q = p[i], h, ld] { multiply_tbb(q.c, q.a, q.b, h, ld); });
    multiply_tbb(p[3].c, p[3].a, p[3].b, h, ld);
    g.wait();
  }
}

}  // namespace heddle::bench::matmul
