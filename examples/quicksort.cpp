// SPDX-License-Identifier: Apache-2.0
// Parallel quicksort with a task_group: partition, sort one side as a task, the other in place.
#include <heddle/heddle.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

template <class It>
void quicksort(It first, It last) {
  while (last - first > 4096) {
    auto pivot = *(first + (last - first) / 2);
    It mid1 = std::partition(first, last, [&](const auto& x) { return x < pivot; });
    It mid2 = std::partition(mid1, last, [&](const auto& x) { return !(pivot < x); });
    heddle::task_group g;
    g.run([=] { quicksort(first, mid1); });
    quicksort(mid2, last);
    g.wait();
    return;
  }
  std::sort(first, last);
}

int main() {
  std::vector<double> v(5'000'000);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  for (auto& x : v) x = dist(rng);
  heddle::task([&] { quicksort(v.begin(), v.end()); }).get();
  std::printf("sorted: %s\n", std::is_sorted(v.begin(), v.end()) ? "yes" : "NO");
  return std::is_sorted(v.begin(), v.end()) ? 0 : 1;
}
