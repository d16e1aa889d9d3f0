// SPDX-License-Identifier: Apache-2.0
#include <tbb/task_group.h>

#include "heat.hpp"

namespace heddle::bench::heat {

namespace tbb_impl {
namespace {

void divide(const problem& p, double* next, const double* cur, int lb, int ub, double decay) {
  if (ub - lb > p.leaf_rows) {
    const int mid = lb + (ub - lb) / 2;
    tbb::task_group g;  // the upper half is the task, as in heddle.cpp
    g.run([&p, next, cur, mid, ub, decay] { divide(p, next, cur, mid, ub, decay); });
    divide(p, next, cur, lb, mid, decay);
    g.wait();
  } else {
    step_rows(p, next, cur, lb, ub, decay);
  }
}

}  // namespace
}  // namespace tbb_impl

double* heat_tbb(const problem& p, double* u0, double* u1) {
  return time_steps(p, u0, u1, [&](double* next, const double* cur, double decay) {
    tbb_impl::divide(p, next, cur, 0, p.nx, decay);
  });
}

}  // namespace heddle::bench::heat
