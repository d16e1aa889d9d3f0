// SPDX-License-Identifier: Apache-2.0
#include <heddle/heddle.hpp>

#include "runtimes.hpp"

namespace heddle::bench::stats {

namespace heddle_impl {
namespace {

void tree(workload& w, std::size_t i) {
  const std::size_t n = w.size();
  heddle::task_group g;
  for (unsigned k = 0; k < 2; ++k)
    if (const auto c = w.child(i, k); c < n) g.run([&w, c] { tree(w, c); });
  w.run_task(i);
  for (unsigned k = 2; k < 4; ++k)
    if (const auto c = w.child(i, k); c < n) g.run([&w, c] { tree(w, c); });
  g.wait();
}

void loop(workload& w) {
  heddle::task_group g;
  for (std::size_t i = 0; i < w.size(); ++i) g.run([&w, i] { w.run_task(i); });
  g.wait();
}

}  // namespace
}  // namespace heddle_impl

void run_heddle(heddle::runtime& rt, workload& w) {
  if (w.form == shape::loop) rt.task([&w] { heddle_impl::loop(w); }).get();
  else rt.task([&w] { heddle_impl::tree(w, 0); }).get();
}

}  // namespace heddle::bench::stats
