// SPDX-License-Identifier: Apache-2.0
// The problem set-up and the stencil over a band of rows, compiled once for every runtime.
#include <algorithm>

#include "heat.hpp"

namespace heddle::bench::heat {

namespace {
constexpr double half_pi = 1.570796326794896558;  // Cilk's xo and yo
constexpr double end_time = 0.0000001;            // Cilk's to
}  // namespace

problem::problem(int nx, int ny, int nt, int leaf_rows)
    : nx(nx), ny(ny), nt(nt), leaf_rows(leaf_rows), sin_x(std::size_t(nx)), sin_y(std::size_t(ny)) {
  dx = half_pi / (nx - 1);
  dy = half_pi / (ny - 1);
  dt = end_time / nt;
  dtdxsq = dt / (dx * dx);
  dtdysq = dt / (dy * dy);
  for (int a = 0; a < nx; ++a) sin_x[std::size_t(a)] = std::sin(a * dx);
  for (int b = 0; b < ny; ++b) sin_y[std::size_t(b)] = std::sin(b * dy);
}

void problem::initial(double* u) const {
  for (int a = 0; a < nx; ++a)
    for (int b = 0; b < ny; ++b) u[std::size_t(a) * ny + b] = sin_x[std::size_t(a)] * sin_y[std::size_t(b)];
}

double problem::exact(int a, int b) const {
  return std::exp(-2.0 * end_time) * sin_x[std::size_t(a)] * sin_y[std::size_t(b)];
}

void step_rows(const problem& p, double* __restrict next, const double* __restrict cur, int lb, int ub,
               double decay) noexcept {
  const std::size_t ny = std::size_t(p.ny);
  const int first = std::max(lb, 1), last = std::min(ub, p.nx - 1);  // interior rows
  const double cx = p.dtdxsq, cy = p.dtdysq;
  for (int a = first; a < last; ++a) {
    const double* __restrict up = cur + std::size_t(a - 1) * ny;
    const double* __restrict row = up + ny;
    const double* __restrict down = row + ny;
    double* __restrict out = next + std::size_t(a) * ny;
    out[0] = 0.0;
    for (std::size_t b = 1; b + 1 < ny; ++b)
      out[b] = cx * (down[b] - 2 * row[b] + up[b]) + cy * (row[b + 1] - 2 * row[b] + row[b - 1]) + row[b];
    out[ny - 1] = decay * p.sin_x[std::size_t(a)];
  }
  if (lb == 0) std::fill(next, next + ny, 0.0);
  if (ub == p.nx) {
    double* out = next + std::size_t(p.nx - 1) * ny;
    for (std::size_t b = 0; b < ny; ++b) out[b] = decay * p.sin_y[b];
  }
}

}  // namespace heddle::bench::heat
