// SPDX-License-Identifier: Apache-2.0
#include "heat.hpp"

namespace heddle::bench::heat {

namespace serial_impl {
namespace {

void divide(const problem& p, double* next, const double* cur, int lb, int ub, double decay) {
  if (ub - lb > p.leaf_rows) {
    const int mid = lb + (ub - lb) / 2;
    divide(p, next, cur, lb, mid, decay);
    divide(p, next, cur, mid, ub, decay);
  } else {
    step_rows(p, next, cur, lb, ub, decay);
  }
}

}  // namespace
}  // namespace serial_impl

double* heat_serial(const problem& p, double* u0, double* u1) {
  return time_steps(p, u0, u1, [&](double* next, const double* cur, double decay) {
    serial_impl::divide(p, next, cur, 0, p.nx, decay);
  });
}

}  // namespace heddle::bench::heat
