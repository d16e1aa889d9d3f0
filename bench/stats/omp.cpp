// SPDX-License-Identifier: Apache-2.0
#include "runtimes.hpp"

namespace heddle::bench::stats {

namespace omp_impl {
namespace {

void tree(workload& w, std::size_t i) {
  const std::size_t n = w.size();
  for (unsigned k = 0; k < 2; ++k)
    if (const auto c = w.child(i, k); c < n) {
#pragma omp task firstprivate(c) shared(w)
      tree(w, c);
    }
  w.run_task(i);
  for (unsigned k = 2; k < 4; ++k)
    if (const auto c = w.child(i, k); c < n) {
#pragma omp task firstprivate(c) shared(w)
      tree(w, c);
    }
#pragma omp taskwait
}

void loop(workload& w) {
  for (std::size_t i = 0; i < w.size(); ++i) {
#pragma omp task firstprivate(i) shared(w)
    w.run_task(i);
  }
#pragma omp taskwait
}

}  // namespace
}  // namespace omp_impl

void run_omp(unsigned threads, workload& w) {
#pragma omp parallel num_threads(threads)
#pragma omp single
  {
    if (w.form == shape::loop) omp_impl::loop(w);
    else omp_impl::tree(w, 0);
  }
}

}  // namespace heddle::bench::stats
