// SPDX-License-Identifier: Apache-2.0
#include <heddle/heddle.hpp>

#include "heat.hpp"

namespace heddle::bench::heat {

namespace heddle_impl {
namespace {

// Cilk's spawn / call / sync. The upper half is the task and the lower half runs here, so that one
// worker alone sweeps the rows upwards as the serial loop (and Cilk, which runs the spawned lower
// half first) does: the hardware prefetcher follows the stream across leaves.
void divide(const problem& p, double* next, const double* cur, int lb, int ub, double decay) {
  if (ub - lb > p.leaf_rows) {
    const int mid = lb + (ub - lb) / 2;
    auto upper = heddle::task(divide, std::cref(p), next, cur, mid, ub, decay);
    divide(p, next, cur, lb, mid, decay);
    *upper;
  } else {
    step_rows(p, next, cur, lb, ub, decay);
  }
}

}  // namespace
}  // namespace heddle_impl

double* heat_heddle(const problem& p, double* u0, double* u1) {
  return time_steps(p, u0, u1, [&](double* next, const double* cur, double decay) {
    heddle_impl::divide(p, next, cur, 0, p.nx, decay);
  });
}

}  // namespace heddle::bench::heat
