// SPDX-License-Identifier: Apache-2.0
// heat: 2D heat diffusion by explicit finite differences (Cilk's heat.cilk, Strumpen's Jacobi-type
// iteration). An nx×ny grid of doubles, two buffers; each of the nt time steps computes the next
// grid from the current one with the five-point stencil, and the boundary from the exact solution
// exp(−2t)·sin x·sin y at the step's time. A step divides the x range (rows) recursively in halves
// down to `leaf_rows` rows, the upper half a task and the lower half run by the caller (as Cilk
// spawns one and calls the other); the steps run one after another. The rows kernel
// (kernel.cpp) is the same machine code in every runtime, so every runtime computes bitwise the
// same grid. One file per runtime: heddle.cpp, tbb.cpp, omp.cpp, serial.cpp; suite.cpp times them.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace heddle::bench::heat {

// The problem: Cilk's domain (x and y in [0, π/2], t in [0, 1e-7]), nt steps of dt = 1e-7 / nt.
struct problem {
  int nx = 0, ny = 0, nt = 0;
  int leaf_rows = 10;  // Cilk's default granularity (-g 10)
  double dx = 0, dy = 0, dt = 0, dtdxsq = 0, dtdysq = 0;
  std::vector<double> sin_x, sin_y;  // sin of each row's x and each column's y

  problem(int nx, int ny, int nt, int leaf_rows);
  std::size_t cells() const { return std::size_t(nx) * std::size_t(ny); }
  // The grid at t = 0: sin x·sin y, which the boundary formula also gives at t = 0.
  void initial(double* u) const;
  // The exact solution exp(−2t)·sin x·sin y at the end time, for the reference's sanity check.
  double exact(int a, int b) const;
  // exp(−2t) at step c (t = c·dt): the boundary of that step is decay·sin x or decay·sin y.
  double decay(int step) const { return std::exp(-2.0 * (double(step) * dt)); }
};

// Rows [lb, ub) of step `step`: next from cur (interior: stencil; row 0 and column 0: 0; row nx−1
// and column ny−1: decay·sin).
void step_rows(const problem& p, double* next, const double* cur, int lb, int ub, double decay) noexcept;

// The time loop every runtime shares: step c reads one buffer and writes the other through
// divide(next, cur, decay), which covers all rows. Returns the buffer holding the last step.
template <class Divide>
double* time_steps(const problem& p, double* u0, double* u1, Divide&& divide) {
  for (int c = 1; c <= p.nt; ++c) {
    divide(u1, u0, p.decay(c));
    std::swap(u0, u1);
  }
  return u0;
}

// All nt steps on u0 (which holds the initial grid) and u1; the result is in the returned buffer.
double* heat_serial(const problem& p, double* u0, double* u1);
double* heat_heddle(const problem& p, double* u0, double* u1);                 // on a worker
double* heat_tbb(const problem& p, double* u0, double* u1);                    // in an arena
double* heat_omp(const problem& p, double* u0, double* u1, unsigned threads);  // makes a team

}  // namespace heddle::bench::heat
