// The spawn suite: fib(n) with a task per call, heddle against oneTBB and serial, 1 and 2 threads.
#include <tbb/task_arena.h>

#include <heddle/heddle.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "../common/suite.hpp"
#include "fib.hpp"

namespace heddle::bench::spawn {

namespace {

long fib_value(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const long next = a + b;
    a = b;
    b = next;
  }
  return a;
}

template <class F>
double timed(long expected, const char* what, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  const long v = f();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (v != expected)
    throw std::runtime_error(std::string("spawn: ") + what + " computed " + std::to_string(v) + ", expected " +
                             std::to_string(expected));
  return s;
}

}  // namespace

void run(const options& opt, nlohmann::json& report) {
  const int n = opt.full ? 32 : opt.quick ? 27 : 30;
  const long expected = fib_value(n);
  const double tasks = 2.0 * double(fib_value(n + 1)) - 2.0;  // calls minus the root
  const auto threads = opt.threads.empty() ? std::vector<unsigned>{1, 2} : opt.threads;
  std::printf("## spawn: fib(%d), a task per call (%.0f tasks), %d interleaved repetitions%s\n\n", n, tasks,
              opt.reps, opt.quick ? " (--quick: n = 27)" : "");

  std::map<unsigned, std::unique_ptr<heddle::runtime>> runtimes;
  std::map<unsigned, std::unique_ptr<tbb::task_arena>> arenas;
  std::vector<variant> vs;
  vs.push_back({"serial", 1, [=] { return timed(expected, "serial", [=] { return fib_serial(n); }); }});
  for (unsigned t : threads) {
    auto* rt = (runtimes[t] = std::make_unique<heddle::runtime>(t)).get();
    auto* arena = (arenas[t] = std::make_unique<tbb::task_arena>(int(t))).get();
    vs.push_back({"heddle", t, [=] { return timed(expected, "heddle", [=] { return *rt->task(fib_heddle, n); }); }});
    vs.push_back({"heddle task_group", t, [=] {
                    return timed(expected, "heddle task_group", [=] { return *rt->task(fib_heddle_group, n); });
                  }});
    vs.push_back({"oneTBB task_group", t, [=] {
                    return timed(expected, "oneTBB", [=] {
                      long v = 0;
                      arena->execute([&] { v = fib_tbb(n); });
                      return v;
                    });
                  }});
  }
  auto rs = run_interleaved(vs, opt.reps);
  std::printf("%s\n", markdown_table(rs, "oneTBB task_group").c_str());

  auto& ratios = report["ratios"];
  const double serial = find(rs, "serial", 1).median();
  for (unsigned t : threads) {
    const double r = find(rs, "heddle", t).median() / find(rs, "oneTBB task_group", t).median();
    ratios["fib_" + std::to_string(t) + "t_vs_tbb"] = r;
    std::printf("fib_%ut_vs_tbb = %.3f (heddle / oneTBB, medians)\n", t, r);
  }
  if (runtimes.count(1)) {
    const double h = (find(rs, "heddle", 1).median() - serial) / tasks * 1e9;
    const double b = (find(rs, "oneTBB task_group", 1).median() - serial) / tasks * 1e9;
    ratios["spawn_ns_1t"] = h;
    ratios["spawn_ns_1t_tbb"] = b;
    std::printf("spawn_ns_1t = %.1f ns per task (oneTBB: %.1f)\n", h, b);
  }
  std::printf("\n");
  report["suites"]["spawn"] = {{"n", n}, {"tasks", tasks}, {"rows", to_json(rs)}};
}

}  // namespace heddle::bench::spawn
