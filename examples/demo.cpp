// SPDX-License-Identifier: Apache-2.0
// heddle-demo: the core runtime against plain serial code on three classic workloads, each result
// checked against the serial one.
#include <heddle/heddle.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

namespace {

// fib with a task per call: a measure of what one spawn costs.
long fib_tasks(int n) {
  if (n < 2) return n;
  auto a = heddle::task(fib_tasks, n - 1);
  auto b = heddle::task(fib_tasks, n - 2);
  return *a + *b;
}

[[gnu::noinline]] long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

template <class It>
void quicksort(It first, It last) {
  while (last - first > 4096) {
    auto pivot = *(first + (last - first) / 2);
    It mid1 = std::partition(first, last, [&](double x) { return x < pivot; });
    It mid2 = std::partition(mid1, last, [&](double x) { return !(pivot < x); });
    heddle::task_group g;
    g.run([=] { quicksort(first, mid1); });
    quicksort(mid2, last);
    g.wait();
    return;
  }
  std::sort(first, last);
}

int mandel_iterations(std::size_t px, std::size_t py, std::size_t size) {
  const std::complex<double> c(-2.0 + 2.5 * double(px) / double(size), -1.25 + 2.5 * double(py) / double(size));
  std::complex<double> z = 0;
  int i = 0;
  while (i < 500 && std::norm(z) <= 4.0) z = z * z + c, ++i;
  return i;
}

double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"heddle-demo: heddle's core runtime against serial code, results checked"};
  unsigned threads = 0;
  int fib_n = 30, reps = 3;
  std::size_t sort_n = 4'000'000, image = 600;
  app.add_option("--threads", threads, "workers (default: HEDDLE_NUM_THREADS or the number of cores)");
  app.add_option("--fib", fib_n, "n for fib(n) with a task per call")->check(CLI::Range(1, 40));
  app.add_option("--sort", sort_n, "doubles to quicksort")->check(CLI::Range(1, 200'000'000));
  app.add_option("--image", image, "Mandelbrot image side in pixels")->check(CLI::Range(1, 20'000));
  app.add_option("--reps", reps, "repetitions (the median is shown)")->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);

  heddle::runtime rt(heddle::runtime_options{.threads = threads});
  std::printf("heddle demo on %u worker threads (median of %d runs)\n\n", rt.num_threads(), reps);
  std::printf("| workload | serial ms | heddle ms | speed-up | result |\n|---|---:|---:|---:|---|\n");
  bool all_ok = true;
  auto row = [&](const char* name, double serial, double parallel, bool ok) {
    all_ok = all_ok && ok;
    std::printf("| %s | %.1f | %.1f | %.2fx | %s |\n", name, serial, parallel, serial / parallel, ok ? "ok" : "WRONG");
  };

  long fs = 0, fp = 0;
  const double fib_serial_ms = median_ms(reps, [&] { fs = fib_serial(fib_n); });
  const double fib_heddle_ms = median_ms(reps, [&] { fp = *rt.task(fib_tasks, fib_n); });
  char label[64];
  std::snprintf(label, sizeof label, "fib(%d), a task per call", fib_n);
  row(label, fib_serial_ms, fib_heddle_ms, fs == fp);

  std::vector<double> input(sort_n);
  std::mt19937_64 rng(2026);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  for (auto& x : input) x = dist(rng);
  std::vector<double> a, b;
  const double sort_serial_ms = median_ms(reps, [&] {
    a = input;
    std::sort(a.begin(), a.end());
  });
  const double sort_heddle_ms = median_ms(reps, [&] {
    b = input;
    rt.task([&] { quicksort(b.begin(), b.end()); }).get();
  });
  std::snprintf(label, sizeof label, "quicksort of %zu doubles", sort_n);
  row(label, sort_serial_ms, sort_heddle_ms, a == b);

  std::vector<int> img_s(image * image), img_p(image * image);
  const double mandel_serial_ms = median_ms(reps, [&] {
    for (std::size_t y = 0; y < image; ++y)
      for (std::size_t x = 0; x < image; ++x) img_s[y * image + x] = mandel_iterations(x, y, image);
  });
  const double mandel_heddle_ms = median_ms(reps, [&] {
    rt.task([&] {
        heddle::parallel_for(std::size_t{0}, image, [&](std::size_t y) {
          for (std::size_t x = 0; x < image; ++x) img_p[y * image + x] = mandel_iterations(x, y, image);
        });
      }).get();
  });
  std::snprintf(label, sizeof label, "Mandelbrot %zux%zu, parallel_for", image, image);
  row(label, mandel_serial_ms, mandel_heddle_ms, img_s == img_p);

  const auto s = rt.stats();
  std::printf("\nscheduler: %llu tasks run, %llu stolen, %llu parks, %llu wake-ups\n",
              static_cast<unsigned long long>(s.executed), static_cast<unsigned long long>(s.steals),
              static_cast<unsigned long long>(s.parks), static_cast<unsigned long long>(s.wakeups));
  // fib(n) with both children spawned creates 2·fib(n+1) − 2 tasks, each doing almost nothing:
  // that row measures what a task costs, not a speed-up.
  const double tasks = 2.0 * double(fib_serial(fib_n + 1)) - 2.0;
  std::printf("fib: %.1f ns per task beyond the serial recursion (%.0f tasks)\n",
              (fib_heddle_ms - fib_serial_ms) * 1e6 / tasks, tasks);
  return all_ok ? 0 : 1;
}
