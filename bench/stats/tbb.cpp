// SPDX-License-Identifier: Apache-2.0
#include <tbb/task_group.h>

#include "runtimes.hpp"

namespace heddle::bench::stats {

namespace tbb_impl {
namespace {

void tree(workload& w, std::size_t i) {
  const std::size_t n = w.size();
  tbb::task_group g;
  for (unsigned k = 0; k < 2; ++k)
    if (const auto c = w.child(i, k); c < n) g.run([&w, c] { tree(w, c); });
  w.run_task(i);
  for (unsigned k = 2; k < 4; ++k)
    if (const auto c = w.child(i, k); c < n) g.run([&w, c] { tree(w, c); });
  g.wait();
}

void loop(workload& w) {
  tbb::task_group g;
  for (std::size_t i = 0; i < w.size(); ++i) g.run([&w, i] { w.run_task(i); });
  g.wait();
}

}  // namespace
}  // namespace tbb_impl

void run_tbb(tbb::task_arena& arena, workload& w) {
  arena.execute([&w] {
    if (w.form == shape::loop) tbb_impl::loop(w);
    else tbb_impl::tree(w, 0);
  });
}

}  // namespace heddle::bench::stats
