#include <heddle/heddle.hpp>

#include "heat.hpp"

namespace heddle::bench::heat {

namespace {

// The lower half is a task, the upper half runs here: Cilk's spawn / call / sync.
void divide(const problem& p, double* next, const double* cur, int lb, int ub, double decay) {
  if (ub - lb > p.leaf_rows) {
    const int mid = lb + (ub - lb) / 2;
    auto lower = heddle::task(divide, std::cref(p), next, cur, lb, mid, decay);
    divide(p, next, cur, mid, ub, decay);
    *lower;
  } else {
    step_rows(p, next, cur, lb, ub, decay);
  }
}

}  // namespace

double* heat_heddle(const problem& p, double* u0, double* u1) {
  return time_steps(p, u0, u1, [&](double* next, const double* cur, double decay) {
    divide(p, next, cur, 0, p.nx, decay);
  });
}

}  // namespace heddle::bench::heat
