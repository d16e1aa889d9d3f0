// SPDX-License-Identifier: Apache-2.0
#include "heat.hpp"

namespace heddle::bench::heat {

namespace omp_impl {
namespace {

void divide(const problem& p, double* next, const double* cur, int lb, int ub, double decay) {
  if (ub - lb > p.leaf_rows) {
    const int mid = lb + (ub - lb) / 2;
#pragma omp task firstprivate(next, cur, mid, ub, decay) shared(p)  // the upper half, as in heddle.cpp
    divide(p, next, cur, mid, ub, decay);
    divide(p, next, cur, lb, mid, decay);
#pragma omp taskwait
  } else {
    step_rows(p, next, cur, lb, ub, decay);
  }
}

}  // namespace
}  // namespace omp_impl

double* heat_omp(const problem& p, double* u0, double* u1, unsigned threads) {
  double* result = nullptr;
  // One team for the whole run; one thread walks the time steps and the others take the tasks.
#pragma omp parallel num_threads(threads)
#pragma omp single
  result = time_steps(p, u0, u1, [&](double* next, const double* cur, double decay) {
    omp_impl::divide(p, next, cur, 0, p.nx, decay);
  });
  return result;
}

}  // namespace heddle::bench::heat
