// SPDX-License-Identifier: Apache-2.0
// What the Cilk-example suites (matmul, heat, lu) share: one divide-and-conquer program written for
// heddle, oneTBB's task_group and OpenMP's tasks, timed against its serial version in one process,
// interleaved, each result checked against the serial one. A suite fills in a cilk::program (a
// peer_program with these peers' names) and runs it with run_peers() and add_peer_ratios()
// (common/run_peers.hpp); compare() checks a result against the serial one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

#include "run_peers.hpp"

namespace heddle::bench::cilk {

inline constexpr const char* serial_name = "serial";
inline constexpr const char* heddle_name = "heddle";
inline constexpr const char* tbb_name = "oneTBB task_group";
inline constexpr const char* omp_name = "OpenMP tasks";

// One program in each runtime, under the suites' peer names; a suite sets its functions.
struct program : peer_program {
  program() {
    heddle_name = cilk::heddle_name;
    tbb_name = cilk::tbb_name;
    omp_name = cilk::omp_name;
  }
};

// Compares n values with the serial reference: each must be within tol·max(1, |want|) of it.
// Throws std::runtime_error naming the suite, the variant, the first index that differs and both
// values. Returns whether every value was bitwise equal (the programs do the same operations in the
// same order, so they should be).
inline bool compare(const std::string& suite, const std::string& who, const double* got, const double* want,
                    std::size_t n, double tol, const char* index_name = "index",
                    std::function<std::string(std::size_t)> where = {}) {
  bool identical = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    identical = false;
    const double err = std::fabs(got[i] - want[i]);
    if (!(err <= tol * std::max(1.0, std::fabs(want[i])))) {  // NaN fails too
      char msg[160];
      std::snprintf(msg, sizeof msg, ": got %.17g, serial %.17g (difference %.3g, tolerance %.3g relative)", got[i],
                    want[i], err, tol);
      std::string at = where ? where(i) : std::to_string(i);
      throw std::runtime_error(suite + ": " + who + " differs from serial at " + index_name + " " + at + msg);
    }
  }
  return identical;
}

}  // namespace heddle::bench::cilk
