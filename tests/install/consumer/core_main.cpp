// SPDX-License-Identifier: Apache-2.0
// A program of the core layer alone, built against heddle::core (find_package(heddle COMPONENTS
// core), or pkg-config heddle-core): tasks, a group, a loop. It must configure, build and link with
// nothing of the layers above, nor their dependencies (MPI, nlohmann-json, liburing).
#include <heddle/core.hpp>

#include <atomic>
#include <cstdio>
#include <vector>

namespace {

long fib(int n) {
  if (n < 2) return n;
  heddle::future<long> a = heddle::task(fib, n - 1);
  heddle::future<long> b = heddle::task(fib, n - 2);
  return *a + *b;
}

}  // namespace

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "core consumer: FAILED: %s\n", what);
      ++failures;
    }
  };
  heddle::runtime rt(2);
  check(*rt.task(fib, 20) == 6765, "fib(20) as tasks");
  std::vector<int> v(10000, 0);
  heddle::parallel_for(std::size_t{0}, v.size(), [&](std::size_t i) { v[i] = static_cast<int>(i % 7); });
  bool all = true;
  for (std::size_t i = 0; i < v.size(); ++i) all = all && v[i] == static_cast<int>(i % 7);
  check(all, "parallel_for wrote every element");
  std::atomic<int> n{0};
  heddle::task_group g(rt);
  for (int i = 0; i < 100; ++i) g.run([&] { n++; });
  check(g.wait() == heddle::task_group_status::complete && n.load() == 100, "a task_group of 100 tasks");
  if (failures == 0) std::puts("core consumer: ok");
  return failures == 0 ? 0 : 1;
}
