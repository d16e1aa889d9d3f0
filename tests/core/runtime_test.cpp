// SPDX-License-Identifier: Apache-2.0
// heddle::runtime: explicit runtimes and their options, HEDDLE_NUM_THREADS, the default runtime,
// stats counters, deep recursion on the default worker stacks, the helping policy (leapfrogging
// and the cap on unrelated nesting), the express lane, and runtimes nested in and waiting on
// each other.
#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "heddle/core/detail/access.hpp"
#include "test_support.hpp"

namespace runtime_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::serial_fib;
using heddle_test::task_fib;
using heddle_test::watchdog;

void await_flag(const std::atomic<bool>& flag) {
  while (!flag.load()) std::this_thread::yield();
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~scoped_env() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// ---------------------------------------------------------------------------------------------
// Explicit runtimes and options

TEST(Runtime, ExplicitThreadCounts) {
  const auto main_id = std::this_thread::get_id();
  for (unsigned n : {1u, 2u, 3u, 4u}) {
    heddle::runtime rt(n);
    EXPECT_EQ(rt.num_threads(), n);
    EXPECT_EQ(rt.stats().workers, n);
    std::mutex m;
    std::set<std::thread::id> ids;
    std::vector<heddle::future<int>> fs;
    for (int i = 0; i < 200; ++i)
      fs.push_back(rt.task([&, i] {
        std::this_thread::sleep_for(20us);
        std::lock_guard lock(m);
        ids.insert(std::this_thread::get_id());
        return i;
      }));
    long sum = 0;
    for (auto& f : fs) sum += *f;
    EXPECT_EQ(sum, 199 * 200 / 2);
    EXPECT_GE(ids.size(), 1u);
    EXPECT_LE(ids.size(), n);  // only the runtime's own workers run its tasks
    EXPECT_EQ(ids.count(main_id), 0u);
  }
}

TEST(Runtime, TaskOnAnExplicitRuntime) {
  heddle::runtime rt(2);
  auto f = rt.task([] { return 1; });
  EXPECT_EQ(*f, 1);
  auto fib = rt.task(task_fib, 22);  // spawns inside go to rt's own workers
  EXPECT_EQ(*fib, serial_fib(22));
  struct counter {
    int v = 0;
    int add(int x) { return v += x; }
  } c;
  auto m = rt.task(&counter::add, &c, 5);
  EXPECT_EQ(*m, 5);
  EXPECT_EQ(c.v, 5);
}

TEST(Runtime, Options) {
  heddle::runtime_options o;
  o.threads = 2;
  o.spin_before_park = 0ns;
  o.stack_bytes = 1 << 20;
  heddle::runtime rt(o);
  EXPECT_EQ(rt.num_threads(), 2u);
  auto f = rt.task(task_fib, 18);
  EXPECT_EQ(*f, serial_fib(18));
}

TEST(Runtime, BadOptionsAreConfigurationErrors) {
  heddle::runtime_options tiny_stack;
  tiny_stack.threads = 1;
  tiny_stack.stack_bytes = 4096;
  EXPECT_THROW(heddle::runtime{tiny_stack}, heddle::configuration_error);
  EXPECT_THROW(heddle::runtime{100000u}, heddle::configuration_error);
  // configuration_error is an invalid_argument.
  EXPECT_THROW(heddle::runtime{tiny_stack}, std::invalid_argument);
}

TEST(Runtime, ManyRuntimesComeAndGo) {
  for (int i = 0; i < 50; ++i) {
    heddle::runtime rt(1 + i % 3);
    auto f = rt.task(task_fib, 10 + i % 5);
    EXPECT_EQ(*f, serial_fib(10 + i % 5));
  }
  // Destroyed right after construction, and destroyed idle after a while.
  for (int i = 0; i < 20; ++i) heddle::runtime rt(2);
  heddle::runtime rt(2);
  std::this_thread::sleep_for(20ms);
}

TEST(Runtime, DestroyedOnAnotherThread) {
  auto rt = std::make_unique<heddle::runtime>(2);
  auto f = rt->task([] { return 3; });
  EXPECT_EQ(*f, 3);
  std::thread t([&rt] { rt.reset(); });
  t.join();
  EXPECT_EQ(rt, nullptr);
}

// ---------------------------------------------------------------------------------------------
// HEDDLE_NUM_THREADS and the default runtime

TEST(RuntimeEnv, DefaultThreadCountWithoutTheVariable) {
  scoped_env env("HEDDLE_NUM_THREADS", nullptr);
  const unsigned hw = std::thread::hardware_concurrency();
  EXPECT_EQ(heddle::default_thread_count(), hw ? hw : 1u);
}

TEST(RuntimeEnv, DefaultThreadCountParsesTheVariable) {
  for (auto [text, value] : {std::pair{"1", 1u}, {"2", 2u}, {"3", 3u}, {"16", 16u}, {"4096", 4096u}}) {
    scoped_env env("HEDDLE_NUM_THREADS", text);
    EXPECT_EQ(heddle::default_thread_count(), value) << text;
  }
}

TEST(RuntimeEnv, BadValuesAreConfigurationErrors) {
  for (const char* bad : {"abc", "0", "-1", "-0", "3x", "x3", "1.5", "4097", "99999999999999999999999", " "}) {
    scoped_env env("HEDDLE_NUM_THREADS", bad);
    try {
      (void)heddle::default_thread_count();
      ADD_FAILURE() << "HEDDLE_NUM_THREADS='" << bad << "' was accepted";
    } catch (const heddle::configuration_error& e) {
      // The message names the variable and the bad value.
      const std::string what = e.what();
      EXPECT_NE(what.find("HEDDLE_NUM_THREADS"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("'") + bad + "'"), std::string::npos) << what;
    }
  }
}

TEST(RuntimeEnv, RuntimeWithZeroThreadsReadsTheVariable) {
  {
    scoped_env env("HEDDLE_NUM_THREADS", "3");
    heddle::runtime rt(0);
    EXPECT_EQ(rt.num_threads(), 3u);
    heddle::runtime dflt;
    EXPECT_EQ(dflt.num_threads(), 3u);
    auto f = dflt.task([] { return 2; });
    EXPECT_EQ(*f, 2);
  }
  {
    scoped_env env("HEDDLE_NUM_THREADS", "abc");
    EXPECT_THROW(heddle::runtime{}, heddle::configuration_error);
    EXPECT_THROW(heddle::runtime{0u}, heddle::configuration_error);
    heddle::runtime explicit_count(2);  // an explicit count does not look at the variable
    EXPECT_EQ(explicit_count.num_threads(), 2u);
  }
}

TEST(Runtime, DefaultRuntime) {
  heddle::runtime& a = heddle::default_runtime();
  heddle::runtime& b = heddle::default_runtime();
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(a.num_threads(), heddle::default_thread_count());
  const auto before = a.stats();
  auto f = heddle::task([] { return 10; });  // from a foreign thread: the default runtime
  EXPECT_EQ(*f, 10);
  EXPECT_GE(a.stats().injected - before.injected, 1u);
  auto g = a.task([] { return 11; });
  EXPECT_EQ(*g, 11);
}

// The default runtime starts once per process, so each of these runs in a child process.
class RuntimeEnvDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// In the child: set a bad HEDDLE_NUM_THREADS, call `entry`, exit 0 if it threw
// configuration_error, 2 if it returned, 3 for any other exception. The call runs on a thread
// that is gone before exit() (not _exit), so that in the ASan build LeakSanitizer checks the
// child without finding stale pointers on a live stack.
template <class F>
[[noreturn]] void exit_with_configuration_error_check(F&& entry) {
  ::setenv("HEDDLE_NUM_THREADS", "abc", 1);
  int code = 2;
  std::thread t([&] {
    try {
      entry();
    } catch (const heddle::configuration_error&) {
      code = 0;
    } catch (...) {
      code = 3;
    }
  });
  t.join();
  std::exit(code);
}

TEST_F(RuntimeEnvDeathTest, DefaultRuntimeHonoursTheVariable) {
  EXPECT_EXIT(
      {
        ::setenv("HEDDLE_NUM_THREADS", "3", 1);
        auto f = heddle::task([] { return 5; });
        const bool ok = heddle::default_runtime().num_threads() == 3 && *f == 5;
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(RuntimeEnvDeathTest, DefaultRuntimeWithBadVariable) {
  EXPECT_EXIT(exit_with_configuration_error_check([] { (void)heddle::default_runtime(); }),
              ::testing::ExitedWithCode(0), "");
}

TEST_F(RuntimeEnvDeathTest, TaskWithBadVariable) {
  // Also checks (under ASan) that the task record made before the runtime failed is not leaked.
  EXPECT_EXIT(exit_with_configuration_error_check([] { (void)heddle::task([] { return std::string(100, 'x'); }); }),
              ::testing::ExitedWithCode(0), "");
}

TEST_F(RuntimeEnvDeathTest, TaskGroupWithBadVariable) {
  EXPECT_EXIT(exit_with_configuration_error_check([] {
                heddle::task_group g;
                g.run([] {});
                g.wait();
              }),
              ::testing::ExitedWithCode(0), "");
}

TEST_F(RuntimeEnvDeathTest, ParallelForWithBadVariable) {
  EXPECT_EXIT(exit_with_configuration_error_check([] { heddle::parallel_for(0, 100, [](int) {}); }),
              ::testing::ExitedWithCode(0), "");
}

// A promise's future belongs to no runtime: `then` outside the workers picks the default one.
TEST_F(RuntimeEnvDeathTest, ThenWithBadVariable) {
  EXPECT_EXIT(exit_with_configuration_error_check([] {
                heddle::promise<int> p;
                auto f = p.get_future();
                p.set_value(1);
                auto g = std::move(f).then([](int v) { return v; });  // home: the default runtime
                (void)*g;
              }),
              ::testing::ExitedWithCode(0), "");
}

// A task's future belongs to its runtime: `then` from any thread runs the successor there.
TEST(RuntimeHome, ThenFromOutsideRunsOnTheFuturesRuntime) {
  heddle::runtime rt(1);
  auto f = rt.task([] { return 1; });
  f.wait();
  const auto before = rt.stats().executed;
  auto g = std::move(f).then([](int v) { return v + 1; });
  EXPECT_EQ(*g, 2);
  EXPECT_EQ(rt.stats().executed, before + 1);
}

TEST(RuntimeDeathTest, DestroyedByItsOwnTask) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* rt = new heddle::runtime(1);
        auto f = rt->task([rt] { delete rt; });
        f.wait();
      },
      "heddle: misuse: heddle::runtime::~runtime: a runtime cannot be destroyed by one of its own tasks");
}

// ---------------------------------------------------------------------------------------------
// Stats

TEST(RuntimeStats, CountersMatchTheWorkDone) {
  heddle::runtime rt(2);
  const auto s0 = rt.stats();
  EXPECT_EQ(s0.workers, 2u);
  auto r = rt.task(task_fib, 20);
  EXPECT_EQ(*r, serial_fib(20));
  const auto s1 = rt.stats();
  // task_fib(n) makes one task per call: 2 * fib(n + 1) - 1 calls, all but the root spawned
  // by workers, the root injected from this thread; each runs exactly once.
  const std::uint64_t calls = 2 * serial_fib(21) - 1;
  EXPECT_EQ(s1.injected - s0.injected, 1u);
  EXPECT_EQ(s1.spawned - s0.spawned, calls - 1);
  EXPECT_EQ(s1.executed - s0.executed, calls);
  EXPECT_EQ(s1.express, s0.express);
}

TEST(RuntimeStats, StealsParksAndWakeups) {
  watchdog dog("RuntimeStats.StealsParksAndWakeups", 60s);
  heddle::runtime rt(2);
  std::this_thread::sleep_for(100ms);  // both workers go to sleep
  const auto s0 = rt.stats();
  EXPECT_GE(s0.parks, 1u);
  // A submission from outside wakes a sleeper. The task then spawns a child and, without
  // forcing it, waits until it has run: only the other worker can have run it, by stealing.
  std::atomic<bool> child_ran{false};
  auto f = rt.task([&] {
    auto child = heddle::task([&] { child_ran = true; });
    await_flag(child_ran);
    child.get();
  });
  f.get();
  const auto s1 = rt.stats();
  EXPECT_GE(s1.wakeups - s0.wakeups, 1u);
  EXPECT_GE(s1.steals - s0.steals, 1u);
  EXPECT_EQ(s1.executed - s0.executed, 2u);
  EXPECT_EQ(s1.spawned - s0.spawned, 1u);
  EXPECT_EQ(s1.injected - s0.injected, 1u);
  std::this_thread::sleep_for(50ms);
  EXPECT_GE(rt.stats().parks, s1.parks);  // counters never go backwards
}

// ---------------------------------------------------------------------------------------------
// Deep recursion and the helping policy

void deep_fib_on(unsigned workers) {
  const int n = scaled(35, 30);
  watchdog dog("deep fib(" + std::to_string(n) + ") on " + std::to_string(workers) + " workers", 300s);
  heddle::runtime rt(workers);  // default options: 8 MiB worker stacks
  auto r = rt.task(task_fib, n);
  EXPECT_EQ(*r, serial_fib(n));
}

TEST(RuntimeRecursion, Fib35OnOneWorker) { deep_fib_on(1); }
TEST(RuntimeRecursion, Fib35OnTwoWorkers) { deep_fib_on(2); }

TEST(RuntimeRecursion, FibOnSmallStacks) {
  // Helping while waiting must not pile unrelated work onto a small stack.
  heddle::runtime_options o;
  o.threads = 2;
  o.stack_bytes = 512 << 10;
  heddle::runtime rt(o);
  const int n = scaled(27, 24);
  auto r = rt.task(task_fib, n);
  EXPECT_EQ(*r, serial_fib(n));
}

TEST(RuntimeRecursion, DeepChainOfNestedForces) {
  // Each task spawns the next and forces it: a chain as deep as a serial recursion would be.
  struct chain {
    static long run(int depth) {
      if (depth == 0) return 0;
      auto next = heddle::task(run, depth - 1);
      return *next + depth;
    }
  };
  heddle::runtime rt(2);
  const int depth = 2000;
  auto r = rt.task(chain::run, depth);
  EXPECT_EQ(*r, long{depth} * (depth + 1) / 2);
}

thread_local int injected_nesting = 0;

// How many bytes of the calling thread's stack are left below the caller's frame.
std::size_t stack_left() {
  thread_local std::uintptr_t lowest = [] {
    pthread_attr_t attr;
    void* low = nullptr;
    std::size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &low, &size);
      pthread_attr_destroy(&attr);
    }
    return reinterpret_cast<std::uintptr_t>(low);
  }();
  return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) - lowest;
}

TEST(RuntimeRecursion, UnrelatedNestingStaysWithinTheStackBudget) {
  // Many tasks from outside, each waiting on a slow task of another runtime: while it waits, a
  // worker picks up the next outside task (unrelated work), which waits in turn, nesting them on
  // its stack. docs/core.md: a waiter takes unrelated work only while a quarter of its stack is
  // left, so on small stacks the nesting stops there instead of overflowing.
  watchdog dog("RuntimeRecursion.UnrelatedNestingStaysWithinTheStackBudget", 120s);
  heddle::runtime_options o;
  o.threads = 2;
  o.stack_bytes = 256 << 10;
  heddle::runtime a(o), b(2);
  std::atomic<int> max_nesting{0};
  std::atomic<std::size_t> min_left{o.stack_bytes};
  const int n = scaled(600, 300);
  std::vector<heddle::future<long>> fs;
  fs.reserve(n);
  for (int i = 0; i < n; ++i)
    fs.push_back(a.task([i, &b, &max_nesting, &min_left] {
      const int depth = ++injected_nesting;
      int seen = max_nesting.load();
      while (depth > seen && !max_nesting.compare_exchange_weak(seen, depth)) {
      }
      const std::size_t left = stack_left();
      std::size_t low = min_left.load();
      while (left < low && !min_left.compare_exchange_weak(low, left)) {
      }
      auto slow = b.task([i] {
        std::this_thread::sleep_for(100us);
        return long{i};
      });
      auto local = heddle::task([i] { return long{i} * 2; });
      const long v = *slow + *local;
      --injected_nesting;
      return v;
    }));
  long sum = 0;
  for (auto& f : fs) sum += *f;
  EXPECT_EQ(sum, 3L * n * (n - 1) / 2);
  std::printf("[ info     ] outside tasks nested up to %d deep on one worker; least stack left %zu KiB of %zu\n",
              max_nesting.load(), min_left.load() >> 10, o.stack_bytes >> 10);
  EXPECT_GE(max_nesting.load(), 1);
  // A quarter of the stack, less the few frames between the waiter's check and the next task.
  EXPECT_GE(min_left.load(), o.stack_bytes / 4 - (32 << 10)) << "helping ate into the last quarter of the stack";
}

TEST(RuntimeRecursion, DeepWaitersStillReachInjectedWork) {
  // Tasks on `a` each wait on a continuation that will run on `a` once a task on `b` is done:
  // the continuation reaches `a` through its injection queue, from b's worker, so a's one
  // worker only gets to it by taking unrelated work while it waits, 200 waits deep. (With a fixed
  // cap of 64 nested unrelated tasks, as the runtime once had, this deadlocked; the stack budget
  // of the default 8 MiB stacks allows far more.)
  watchdog dog("RuntimeRecursion.DeepWaitersStillReachInjectedWork", 60s);
  heddle::runtime a(1), b(1);
  constexpr int n = 200;
  std::vector<heddle::future<int>> outer;
  for (int i = 0; i < n; ++i)
    outer.push_back(a.task([&b, i] {
      auto f = b.task([i] {
                  std::this_thread::sleep_for(1ms);
                  return i;
                }).then([](int v) { return v * 2; });  // called on a's worker: runs on a
      return *f;
    }));
  long sum = 0;
  for (auto& f : outer) sum += *f;
  EXPECT_EQ(sum, long{n} * (n - 1));
}

// ---------------------------------------------------------------------------------------------
// The express lane (a hook for the layers above the core; reached through detail)

TEST(RuntimeExpress, RunsBeforeQueuedWork) {
  watchdog dog("RuntimeExpress.RunsBeforeQueuedWork", 60s);
  heddle::runtime rt(1);
  std::atomic<bool> started{false}, release{false};
  std::mutex m;
  std::vector<int> order;
  auto blocker = rt.task([&] {
    started = true;
    await_flag(release);
  });
  await_flag(started);
  std::vector<heddle::future<void>> normal;
  for (int i = 0; i < 10; ++i)
    normal.push_back(rt.task([&, i] {
      std::lock_guard lock(m);
      order.push_back(i);
    }));
  auto* s = heddle::core_detail::make_task([&] {
    std::lock_guard lock(m);
    order.push_back(100);
  });
  heddle::core_detail::submit_express(heddle::core_detail::access::core_of(rt), s);
  heddle::future<void> express(heddle::core_detail::adopt, s);
  release = true;
  blocker.get();
  for (auto& f : normal) f.get();
  express.get();
  ASSERT_EQ(order.size(), 11u);
  EXPECT_EQ(order.front(), 100);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(order[i + 1], i);
  EXPECT_EQ(rt.stats().express, 1u);
}

TEST(RuntimeExpress, AWaitingWorkerRunsExpressWork) {
  watchdog dog("RuntimeExpress.AWaitingWorkerRunsExpressWork", 60s);
  heddle::runtime a(1), b(1);
  std::atomic<bool> release{false};
  auto slow = b.task([&] {
    await_flag(release);
    return 7;
  });
  auto waiter = a.task([&slow] { return *slow; });  // a's only worker waits on b
  std::this_thread::sleep_for(10ms);
  auto* s = heddle::core_detail::make_task([] { return 3; });
  heddle::core_detail::submit_express(heddle::core_detail::access::core_of(a), s);
  heddle::future<int> express(heddle::core_detail::adopt, s);
  EXPECT_EQ(*express, 3);  // run by a's worker while it waits
  EXPECT_FALSE(waiter.is_ready());
  release = true;
  EXPECT_EQ(*waiter, 7);
}

// ---------------------------------------------------------------------------------------------
// Runtimes inside runtimes, futures forced across runtimes

TEST(RuntimeNesting, RuntimeCreatedAndDestroyedInsideATask) {
  heddle::runtime outer(2);
  auto r = outer.task([] {
    heddle::runtime inner(2);
    auto f = inner.task(task_fib, 20);
    return *f;  // an outer worker waits on the inner runtime
  });
  EXPECT_EQ(*r, serial_fib(20));
}

TEST(RuntimeNesting, FuturesForcedAcrossRuntimes) {
  watchdog dog("RuntimeNesting.FuturesForcedAcrossRuntimes", 120s);
  heddle::runtime a(2), b(2);
  std::vector<heddle::future<long>> fs;
  for (int i = 0; i < 100; ++i)
    fs.push_back(a.task([&b, &a, i] {
      // a waits on b, which waits on a again.
      auto on_b = b.task([&a, i] {
        auto back_on_a = a.task(task_fib, i % 15);
        return *back_on_a + 1;
      });
      auto local = heddle::task(task_fib, i % 10);
      return *on_b + *local;
    }));
  long sum = 0, expect = 0;
  for (auto& f : fs) sum += *f;
  for (int i = 0; i < 100; ++i) expect += serial_fib(i % 15) + 1 + serial_fib(i % 10);
  EXPECT_EQ(sum, expect);
}

TEST(RuntimeNesting, WhenAllAndThenAcrossRuntimes) {
  heddle::runtime a(1), b(2);
  auto x = a.task([] { return 2; });
  auto y = b.task([] { return 3; });
  auto both = heddle::when_all(std::move(x), std::move(y));
  auto prod = b.task([&both] { return std::get<0>(*both) * std::get<1>(*both); });
  EXPECT_EQ(*prod, 6);
  auto chained = a.task([&b] { return b.task([] { return 20; }).then([](int v) { return v + 1; }); });
  heddle::future<int> inner = std::move(chained).get();
  EXPECT_EQ(*inner, 21);
}

}  // namespace

}  // namespace runtime_test
