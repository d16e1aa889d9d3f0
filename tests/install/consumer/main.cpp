// SPDX-License-Identifier: Apache-2.0
// Uses every public call of an installed heddle and checks each result. Exits non-zero (with a
// line per failed check) on any wrong result, so the install test fails on a broken package as
// well as on a broken runtime. Also built by tests/install/run.sh with pkg-config flags alone.
#include <heddle/heddle.hpp>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace {

int failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

// Runs `body`; true if it threw an E.
template <class E, class F>
bool throws(F&& body) {
  try {
    body();
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

// A free function that spawns from inside a worker (the spawn-local path) and forces both ways.
long fib(int n) {
  if (n < 12) return serial_fib(n);
  heddle::future<long> a = heddle::task(fib, n - 1);
  heddle::future<long> b = heddle::task(fib, n - 2);
  return *a + b.get();
}

struct accumulator {
  long base;
  long add(long x, long y) const { return base + x + y; }
};

void check_futures() {
  // heddle::task with a free function; *f and f.get().
  heddle::future<long> f = heddle::task(fib, 20);
  CHECK(f.valid());
  CHECK(*f == 6765);
  CHECK(f.is_ready());
  CHECK(f.get() == 6765);

  // A member function with the object pointer first.
  accumulator acc{100};
  heddle::future<long> m = heddle::task(&accumulator::add, &acc, 20L, 3L);
  CHECK(m.get() == 123);

  // future<void>: get() and *, and an exception that comes back through get().
  std::atomic<int> ran{0};
  heddle::future<void> v = heddle::task([&ran] { ran.store(1); });
  v.get();
  *v;
  CHECK(v.is_ready());
  CHECK(ran.load() == 1);
  heddle::future<void> bad = heddle::task([] { throw std::runtime_error("boom"); });
  bad.wait();  // wait() does not throw
  CHECK(bad.is_ready());
  CHECK(throws<std::runtime_error>([&] { bad.get(); }));

  // Empty futures: default-constructed and moved-from.
  heddle::future<int> empty;
  CHECK(!empty.valid());
  CHECK(!empty.is_ready());
  CHECK(throws<heddle::invalid_future>([&] { (void)empty.get(); }));
  heddle::future<int> src = heddle::task([] { return 7; });
  heddle::future<int> dst = std::move(src);
  CHECK(!src.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  CHECK(dst.valid());
  CHECK(*dst == 7);

  // A value moved out of an rvalue future.
  std::string s = *heddle::task([] { return std::string(40, 'h'); });
  CHECK(s == std::string(40, 'h'));
}

void check_continuations() {
  heddle::future<int> a = heddle::task([] { return 20; });
  auto b = std::move(a).then([](int x) { return x + 1; });
  CHECK(!a.valid());  // NOLINT(bugprone-use-after-move): then consumes the future
  auto c = std::move(b).then([](int x) { return std::to_string(2 * x); });
  static_assert(std::is_same_v<decltype(c), heddle::future<std::string>>);
  CHECK(c.get() == "42");

  // then on future<void>, and a continuation returning void.
  std::atomic<int> step{0};
  heddle::future<void> first = heddle::task([&step] { step.store(1); });
  auto second = std::move(first).then([&step] { return step.load() + 1; });
  CHECK(*second == 2);
  auto last = std::move(second).then([&step](int x) { step.store(10 * x); });
  static_assert(std::is_same_v<decltype(last), heddle::future<void>>);
  last.get();
  CHECK(step.load() == 20);

  // An exception skips the continuation and is passed on.
  std::atomic<bool> skipped_ran{false};
  heddle::future<int> failing = heddle::task([]() -> int { throw std::logic_error("no value"); });
  auto after = std::move(failing).then([&skipped_ran](int x) {
    skipped_ran.store(true);
    return x;
  });
  CHECK(throws<std::logic_error>([&] { (void)after.get(); }));
  CHECK(!skipped_ran.load());
}

void check_when_all() {
  // Variadic: future<tuple<...>>, a future<void> gives std::monostate.
  auto i = heddle::task([] { return 6; });
  auto d = heddle::task([] { return 0.5; });
  auto v = heddle::task([] {});
  auto s = heddle::task([] { return std::string("x"); });
  auto all = heddle::when_all(std::move(i), std::move(d), std::move(v), std::move(s));
  static_assert(std::is_same_v<decltype(all), heddle::future<std::tuple<int, double, std::monostate, std::string>>>);
  auto [n, x, none, str] = all.get();
  (void)none;
  CHECK(n == 6);
  CHECK(x == 0.5);
  CHECK(str == "x");

  // A vector of futures: future<vector<T>>, in order.
  std::vector<heddle::future<int>> fs;
  for (int k = 0; k < 100; ++k) fs.push_back(heddle::task([k] { return k * k; }));
  heddle::future<std::vector<int>> squares = heddle::when_all(std::move(fs));
  const std::vector<int>& got = *squares;
  CHECK(got.size() == 100);
  bool in_order = true;
  for (std::size_t k = 0; k < got.size(); ++k) in_order = in_order && got[k] == static_cast<int>(k * k);
  CHECK(in_order);

  // The first failed input's exception.
  auto ok = heddle::task([] { return 1; });
  auto ko = heddle::task([]() -> int { throw std::out_of_range("input 2"); });
  auto mixed = heddle::when_all(std::move(ok), std::move(ko));
  CHECK(throws<std::out_of_range>([&] { (void)mixed.get(); }));

  // Chained after when_all.
  std::vector<heddle::future<long>> parts;
  for (int k = 10; k < 15; ++k) parts.push_back(heddle::task(fib, k));
  auto sum = heddle::when_all(std::move(parts)).then([](std::vector<long> xs) {
    return std::accumulate(xs.begin(), xs.end(), 0L);
  });
  CHECK(*sum == 55 + 89 + 144 + 233 + 377);
}

void check_task_group() {
  heddle::task_group g;
  std::atomic<int> count{0};
  for (int k = 0; k < 1000; ++k) g.run([&count] { count.fetch_add(1); });
  CHECK(g.wait() == heddle::task_group_status::complete);
  CHECK(count.load() == 1000);

  // The group can be reused; an exception comes back from wait() and resets.
  g.run([] { throw std::runtime_error("group task failed"); });
  CHECK(throws<std::runtime_error>([&] { g.wait(); }));
  g.run([&count] { count.fetch_add(1); });
  CHECK(g.wait() == heddle::task_group_status::complete);
  CHECK(count.load() == 1001);

  // Cancellation: the token sees it, tasks that have not started are skipped, wait() says so.
  heddle::task_group c;
  heddle::cancellation_token t = c.token();
  CHECK(!t.cancelled());
  CHECK(!c.is_cancelling());
  c.cancel();
  CHECK(c.is_cancelling());
  CHECK(t.cancelled());
  CHECK(static_cast<bool>(t));
  std::atomic<int> after_cancel{0};
  for (int k = 0; k < 100; ++k) c.run([&after_cancel] { after_cancel.fetch_add(1); });
  CHECK(c.wait() == heddle::task_group_status::cancelled);
  CHECK(after_cancel.load() == 0);
  CHECK(!c.is_cancelling());  // reset by wait()

  // A running task polls the token and stops.
  heddle::task_group p;
  std::atomic<bool> started{false};
  std::atomic<bool> saw_cancel{false};
  heddle::cancellation_token pt = p.token();
  p.run([&] {
    started.store(true);
    while (!pt.cancelled()) {
    }
    saw_cancel.store(true);
  });
  while (!started.load()) {
  }
  p.cancel();
  CHECK(p.wait() == heddle::task_group_status::cancelled);
  CHECK(saw_cancel.load());
}

void check_parallel_for() {
  const std::size_t n = 100'000;
  std::vector<double> a(n, -1.0);
  heddle::parallel_for(std::size_t{0}, n, [&](std::size_t i) { a[i] = 0.5 * static_cast<double>(i); });
  bool all = true;
  for (std::size_t i = 0; i < n; ++i) all = all && a[i] == 0.5 * static_cast<double>(i);
  CHECK(all);

  // With a grain: every index exactly once.
  std::vector<std::atomic<int>> hits(n);
  heddle::parallel_for(
      std::size_t{0}, n, [&](std::size_t i) { hits[i].fetch_add(1); }, 64);
  bool once = true;
  for (auto& h : hits) once = once && h.load() == 1;
  CHECK(once);

  // An empty range calls nothing; an exception comes back.
  std::atomic<int> calls{0};
  heddle::parallel_for(std::size_t{5}, std::size_t{5}, [&](std::size_t) { calls.fetch_add(1); });
  CHECK(calls.load() == 0);
  CHECK(throws<std::runtime_error>([] {
    heddle::parallel_for(0, 1000, [](int i) {
      if (i == 500) throw std::runtime_error("bad index");
    });
  }));

  // From inside a task (on a worker).
  auto nested = heddle::task([] {
    std::vector<int> b(10'000, 0);
    heddle::parallel_for(
        std::size_t{0}, b.size(), [&](std::size_t i) { b[i] = 1; }, 100);
    return std::accumulate(b.begin(), b.end(), 0);
  });
  CHECK(*nested == 10'000);
}

void check_runtimes() {
  heddle::runtime rt(2);
  CHECK(rt.num_threads() == 2);
  auto f = rt.task(fib, 22);
  CHECK(*f == serial_fib(22));
  accumulator acc{1};
  CHECK(rt.task(&accumulator::add, &acc, 2L, 3L).get() == 6);

  // A group and a loop on an explicit runtime.
  heddle::task_group g(rt);
  std::atomic<int> count{0};
  for (int k = 0; k < 50; ++k) g.run([&count] { count.fetch_add(1); });
  CHECK(g.wait() == heddle::task_group_status::complete);
  CHECK(count.load() == 50);

  heddle::runtime_stats st = rt.stats();
  CHECK(st.workers == 2);
  CHECK(st.executed >= 52);  // the fib root, the member call and the 50 group tasks at least
  CHECK(st.injected >= 52);  // all of them submitted from this thread, outside the runtime
  CHECK(st.spawned >= 1);    // fib(22) spawns from its workers

  // Options.
  heddle::runtime_options opt;
  opt.threads = 3;
  opt.spin_before_park = std::chrono::microseconds(10);
  heddle::runtime rt3(opt);
  CHECK(rt3.num_threads() == 3);
  CHECK(rt3.task([] { return 5; }).get() == 5);

  // The default runtime.
  heddle::runtime& def = heddle::default_runtime();
  CHECK(&def == &heddle::default_runtime());
  CHECK(def.num_threads() == heddle::default_thread_count());
  CHECK(def.num_threads() >= 1);
  CHECK(def.task([] { return 9; }).get() == 9);
  CHECK(def.stats().executed >= 1);
}

void check_cancellation_source() {
  heddle::cancellation_token never;
  CHECK(!never.cancelled());

  heddle::cancellation_token t;
  {
    heddle::cancellation_source src;
    t = src.token();
    heddle::cancellation_token copy = t;
    CHECK(!src.cancelled());
    CHECK(!t.cancelled());
    // A task that polls a token until another thread cancels the source.
    auto worker = heddle::task([tok = src.token()] {
      long spins = 0;
      while (!tok.cancelled()) ++spins;
      return spins >= 0;
    });
    src.cancel();
    CHECK(src.cancelled());
    CHECK(t.cancelled());
    CHECK(copy.cancelled());
    CHECK(*worker);
  }
  CHECK(t.cancelled());  // the token keeps the source's flag alive
}

void check_error_types() {
  static_assert(std::is_base_of_v<std::runtime_error, heddle::task_cancelled>);
  static_assert(std::is_base_of_v<std::logic_error, heddle::invalid_future>);
  static_assert(std::is_base_of_v<std::invalid_argument, heddle::configuration_error>);
}

// The async layer: a timer, a socket read, a file read through io_uring and a child process, with
// successors of every strategy and a promise completed from another thread.
void check_async() {
  using namespace std::chrono_literals;
  heddle::runtime rt(2);
  const auto start = std::chrono::steady_clock::now();
  auto timer = heddle::sleep_for(rt, 2ms).then(heddle::strategy::express, [] { return 1; });
  CHECK(*timer == 1 && std::chrono::steady_clock::now() - start >= 2ms);

  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  std::array<std::byte, 4> in{};
  auto got = heddle::io::read(rt, sv[0], in).then(heddle::strategy::short_task, [](std::size_t n) { return n; });
  const char ping[4] = {'p', 'i', 'n', 'g'};
  CHECK(*heddle::io::write(rt, sv[1], std::as_bytes(std::span(ping))) == 4);
  CHECK(*got == 4 && in[0] == std::byte{'p'});
  close(sv[1]);
  try {
    heddle::io::read(rt, sv[0], in).get();
    CHECK(false);
  } catch (const std::system_error& e) {
    CHECK(e.code() == heddle::io::errc::end_of_file);
  }
  close(sv[0]);

  char path[] = "/tmp/heddle-consumer-XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0);
  unlink(path);
  CHECK(*heddle::io::pwrite(rt, fd, std::as_bytes(std::span(ping)), 0) == 4);
  std::array<std::byte, 4> back{};
  CHECK(*heddle::io::pread(rt, fd, back, 0) == 4 && back[3] == std::byte{'g'});
  close(fd);

  const pid_t child = fork();
  if (child == 0) _exit(3);
  const int status = *heddle::io::wait_process(rt, child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);

  heddle::promise<int> p(rt);
  auto doubled = p.get_future().then(heddle::strategy::asap, [](int v) { return 2 * v; });
  std::thread([&p] { p.set_value(21); }).join();
  CHECK(*doubled == 42);

  heddle::cancellation_source src;
  auto never = heddle::sleep_for(rt, 1h, src.token());
  src.cancel();
  try {
    never.get();
    CHECK(false);
  } catch (const heddle::operation_cancelled&) {
  }
  const heddle::runtime_stats s = rt.stats();
  CHECK(s.latency(heddle::strategy::express).count == 1);
  CHECK(s.latency(heddle::strategy::asap).count == 1);
}

// The dispatch layer: queues, groups and a source through the installed headers.
void check_dispatch() {
  using namespace std::chrono_literals;
  heddle::runtime rt(2);
  heddle::serial_queue q(rt, "consumer");
  std::vector<int> order;
  heddle::group g;
  for (int i = 0; i < 100; ++i) g.async(q, [&order, i] { order.push_back(i); });
  std::atomic<int> notified{0};
  g.notify(q, [&] { notified.fetch_add(1); });
  g.wait();
  CHECK(q.sync([&] { return order.size(); }) == 100u);
  std::vector<int> expected(100);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(order == expected);
  CHECK(q.sync([&] { return notified.load(); }) == 1);
  CHECK(throws<heddle::queue_deadlock>([&] { q.sync([&] { q.sync([] {}); }); }));
  CHECK(heddle::concurrent_queue(rt).sync([] { return 6 * 7; }) == 42);
  std::atomic<std::uint64_t> ticks{0};
  auto tick = heddle::source::timer(1ms, q, [&](std::uint64_t n) { ticks.fetch_add(n); });
  heddle::sleep_for(rt, 20ms).get();
  tick.cancel().get();
  CHECK(ticks.load() >= 1);
}

}  // namespace

int main() {
  check_futures();
  check_continuations();
  check_when_all();
  check_task_group();
  check_parallel_for();
  check_runtimes();
  check_cancellation_source();
  check_error_types();
  check_async();
  check_dispatch();
  if (failures != 0) {
    std::fprintf(stderr, "heddle install consumer: %d check(s) failed\n", failures);
    return 1;
  }
  std::puts("heddle install consumer: all checks passed");
  return 0;
}
