// SPDX-License-Identifier: Apache-2.0
// heddle::co_task: spawn and co_await of tasks and futures, where coroutines resume, exceptions,
// million-deep chains without stack growth, concurrent coroutines with checked results, and a
// runtime that stops with coroutines queued or suspended (their frames destroyed, none resumed
// after; the ASan build checks for leaks).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "manual_promise.hpp"
#include "test_support.hpp"

namespace coroutine_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::alive_counter;
using heddle_test::watchdog;

heddle::co_task<int> constant(int v) { co_return v; }

heddle::co_task<int> add_two_awaited(int a, int b) {
  const int x = co_await constant(a);
  const int y = co_await constant(b);
  co_return x + y;
}

TEST(Coroutine, SpawnedCoroutineGivesItsValueToItsFuture) {
  heddle::runtime rt(2);
  EXPECT_EQ(rt.spawn(add_two_awaited(20, 22)).get(), 42);
  EXPECT_EQ(rt.execute([] { return heddle::spawn(constant(7)).get(); }), 7);
}

heddle::co_task<void> set_flag(std::atomic<bool>* ran) {
  ran->store(true);
  co_return;
}

TEST(Coroutine, ATaskRunsOnlyWhenAwaitedOrSpawned) {
  heddle::runtime rt(2);
  std::atomic<bool> ran{false};
  {
    heddle::co_task<void> dropped = set_flag(&ran);
    EXPECT_TRUE(dropped.valid());
  }
  EXPECT_FALSE(ran.load());  // made and destroyed, never run
  heddle::co_task<void> t = set_flag(&ran);
  heddle::future<void> f = rt.spawn(std::move(t));
  EXPECT_FALSE(t.valid());
  f.get();
  EXPECT_TRUE(ran.load());
  EXPECT_THROW((void)rt.spawn(std::move(t)), heddle::invalid_future);  // spawned already
}

heddle::co_task<long> fib(int n) {
  if (n < 2) co_return n;
  heddle::future<long> a = heddle::spawn(fib(n - 1));
  const long b = co_await fib(n - 2);
  co_return co_await std::move(a) + b;
}

TEST(Coroutine, FibWithSpawnAndAwaitOnEveryRuntimeSize) {
  watchdog dog("Coroutine.FibWithSpawnAndAwaitOnEveryRuntimeSize", 120s);
  const int n = scaled(24, 18);
  long expect[2] = {0, 1};
  for (int i = 2; i <= n; ++i) expect[i % 2] = expect[0] + expect[1];
  for (unsigned threads : {1u, 2u, 4u}) {
    heddle::runtime rt(threads);
    EXPECT_EQ(rt.spawn(fib(n)).get(), expect[n % 2]) << threads << " workers";
  }
}

struct custom_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A coroutine whose frame holds `Bytes` of its own (the array lives across the co_await): spawn's
// record has room in the frame's block (small), has none there (mid), or the frame is larger than
// any block (large), with g++ 12. Its locals' destructors run before its result is seen.
template <std::size_t Bytes>
heddle::co_task<std::string> framed(heddle::runtime* rt, int v, std::atomic<long>* alive, std::atomic<long>* started,
                                    bool fail) {
  // Counted alive before it counts as started: a waiter that sees every coroutine started and none
  // alive (check_frames_of) then knows that none will touch either counter again.
  alive_counter here(alive);
  started->fetch_add(1);
  std::array<unsigned char, Bytes> pad{};
  pad[static_cast<std::size_t>(v) % Bytes] = static_cast<unsigned char>(v);
  const int w = co_await rt->task([v] { return v; });
  if (fail) throw custom_error("framed " + std::to_string(Bytes));
  co_return std::to_string(w + pad[static_cast<std::size_t>(w) % Bytes]);
}
template <std::size_t Bytes>
heddle::co_task<std::string> awaits_framed(heddle::runtime* rt, int v, std::atomic<long>* alive,
                                           std::atomic<long>* started) {
  std::string r = co_await framed<Bytes>(rt, v, alive, started, false);
  co_return r + "!";
}

template <std::size_t Bytes>
void check_frames_of(heddle::runtime& rt) {
  std::atomic<long> alive{0}, started{0};
  const int n = scaled(300, 60);
  for (int i = 0; i < n; ++i) {
    heddle::future<std::string> f = rt.spawn(framed<Bytes>(&rt, i % 100, &alive, &started, i % 7 == 0));
    if (i % 7 == 0) EXPECT_THROW((void)f.get(), custom_error) << Bytes;
    else EXPECT_EQ(f.get(), std::to_string(2 * (i % 100))) << Bytes;
    EXPECT_EQ(alive.load(), 0) << Bytes << "-byte frame: a local outlived the coroutine's result";
    EXPECT_EQ(rt.spawn(awaits_framed<Bytes>(&rt, i % 100, &alive, &started)).get(),
              std::to_string(2 * (i % 100)) + "!");
  }
  // Futures dropped unread: the coroutine's end frees its record, with the block that holds it
  // (the ASan build sees any leak).
  started = 0;
  for (int i = 0; i < n; ++i) (void)rt.spawn(framed<Bytes>(&rt, i, &alive, &started, i % 5 == 0));
  while (started.load() < n || alive.load() != 0) std::this_thread::yield();
}

TEST(Coroutine, FramesOfEverySizeCompleteAfterTheirLocalsAreGone) {
  watchdog dog("Coroutine.FramesOfEverySizeCompleteAfterTheirLocalsAreGone", 120s);
  for (unsigned threads : {1u, 2u}) {
    heddle::runtime rt(threads);
    check_frames_of<8>(rt);
    check_frames_of<150>(rt);
    check_frames_of<2000>(rt);
  }
}

heddle::co_task<int> throws_after_awaiting() {
  (void)co_await constant(1);
  throw custom_error("from the coroutine");
}

heddle::co_task<std::string> catches_and_rethrows(bool rethrow) {
  try {
    (void)co_await throws_after_awaiting();
  } catch (const custom_error& e) {
    if (rethrow) throw;
    co_return std::string("caught: ") + e.what();
  }
  co_return "not thrown";
}

heddle::co_task<void> awaits_a_failing_future(heddle::runtime* rt) {
  co_await rt->task([]() -> int { throw custom_error("from the task"); });
}

TEST(Coroutine, ExceptionsPropagateThroughCoAwaitAndSpawn) {
  heddle::runtime rt(2);
  EXPECT_EQ(rt.spawn(catches_and_rethrows(false)).get(), "caught: from the coroutine");
  heddle::future<std::string> f = rt.spawn(catches_and_rethrows(true));
  try {
    (void)f.get();
    ADD_FAILURE() << "no exception";
  } catch (const custom_error& e) {
    EXPECT_STREQ(e.what(), "from the coroutine");  // the same type and text, unchanged
  }
  EXPECT_THROW(rt.spawn(awaits_a_failing_future(&rt)).get(), custom_error);
}

heddle::co_task<int> await_lvalue_and_rvalue(heddle::runtime* rt) {
  heddle::future<int> kept = rt->task([] { return 5; });
  int& v = co_await kept;  // stays in the future
  v += 1;
  EXPECT_TRUE(kept.valid());
  EXPECT_EQ(kept.get(), 6);
  const int moved = co_await rt->task([] { return 10; });
  co_return moved + kept.get();
}

TEST(Coroutine, CoAwaitOfAFutureLvalueOrRvalue) {
  heddle::runtime rt(2);
  EXPECT_EQ(rt.spawn(await_lvalue_and_rvalue(&rt)).get(), 16);
}

heddle::co_task<long> reads_shared(heddle::shared_future<long> sf, bool by_copy) {
  if (by_copy) co_return co_await std::move(sf) + 1;
  const long& v = co_await sf;  // lives as long as sf
  co_return v + 2;
}

TEST(Coroutine, ManyCoroutinesAwaitOneSharedFuture) {
  heddle::runtime rt(2), other(1);
  std::atomic<bool> go{false};
  heddle::shared_future<long> sf = other
                                       .task([&go] {
                                         while (!go.load()) std::this_thread::yield();
                                         return 40L;
                                       })
                                       .share();
  std::vector<heddle::future<long>> fs;
  for (int i = 0; i < 64; ++i) fs.push_back(rt.spawn(reads_shared(sf, i % 2 == 0)));
  go = true;
  for (int i = 0; i < 64; ++i) EXPECT_EQ(fs[i].get(), i % 2 == 0 ? 41 : 42) << i;
  // A stored exception reaches every awaiter.
  heddle::shared_future<long> bad = other.task([]() -> long { throw custom_error("shared"); }).share();
  for (int i = 0; i < 4; ++i) EXPECT_THROW(rt.spawn(reads_shared(bad, i % 2 == 0)).get(), custom_error);
}

// Awaits a future of another runtime's task that takes a while: the coroutine must go on on the
// runtime it ran on, whichever runtime completed the future.
heddle::co_task<bool> resumes_at_home(heddle::runtime* home, heddle::runtime* other, heddle::strategy how,
                                      bool by_strategy) {
  auto slow = other->task([] {
    std::this_thread::sleep_for(2ms);
    return 1;
  });
  const int v = by_strategy ? co_await heddle::resume(how, std::move(slow)) : co_await std::move(slow);
  co_return v == 1 && heddle::this_worker::runtime() == home;
}

TEST(Coroutine, ResumesOnItsOwnRuntimeByTheStrategyGiven) {
  heddle::runtime home(2), other(2);
  EXPECT_TRUE(home.spawn(resumes_at_home(&home, &other, heddle::strategy::normal, false)).get());
  for (heddle::strategy how : {heddle::strategy::normal, heddle::strategy::express})
    EXPECT_TRUE(home.spawn(resumes_at_home(&home, &other, how, true)).get()) << static_cast<int>(how);
}

// A co_await of a future (or a shared_future) done already goes on at once, as no task; with a
// completion waiting in the express lane of the worker's runtime (a `then` successor of a promise
// fulfilled by another thread), the coroutine yields to it first and goes on as a task of its
// worker. One worker: without the yield, the completion could not run before the coroutine went on.
struct yield_seen {
  bool completion_ran_first = false;
  std::uint64_t tasks_run_meanwhile = 0;
  int value = 0;
};
heddle::co_task<yield_seen> awaits_a_done_future(heddle::runtime* rt, bool completion_waiting, bool shared) {
  std::atomic<bool> completion_ran{false};
  heddle_test::manual_promise<int> p;
  heddle::future<void> completion = p.get_future().then([&completion_ran](int) { completion_ran = true; });
  if (completion_waiting) std::thread([&p] { p.set_value(1); }).join();  // queued in the express lane
  const std::uint64_t before = rt->stats().executed;
  heddle::shared_future<int> done_shared = heddle::make_ready_future(7).share();
  yield_seen seen;
  seen.value = shared ? co_await done_shared : co_await heddle::make_ready_future(7);
  seen.completion_ran_first = completion_ran.load();
  seen.tasks_run_meanwhile = rt->stats().executed - before;
  if (!completion_waiting) p.set_value(1);
  co_await std::move(completion);
  co_return seen;
}

TEST(Coroutine, ADoneFutureGoesOnAtOnceUnlessCompletionsWait) {
  heddle::runtime rt(1);
  for (bool shared : {false, true}) {
    const yield_seen alone = rt.spawn(awaits_a_done_future(&rt, false, shared)).get();
    EXPECT_EQ(alone.value, 7) << shared;
    EXPECT_FALSE(alone.completion_ran_first) << shared;
    EXPECT_EQ(alone.tasks_run_meanwhile, 0u) << shared;  // went on in the same task
    const yield_seen behind = rt.spawn(awaits_a_done_future(&rt, true, shared)).get();
    EXPECT_EQ(behind.value, 7) << shared;
    EXPECT_TRUE(behind.completion_ran_first) << shared;
    EXPECT_GE(behind.tasks_run_meanwhile, 2u) << shared;  // the completion, then the coroutine's going on
  }
}

heddle::co_task<int> hops(heddle::runtime* a, heddle::runtime* b) {
  int where = 0;
  co_await heddle::schedule(*b);
  where += heddle::this_worker::runtime() == b ? 1 : 100;
  co_await heddle::schedule(*b);  // there already: goes on without suspending
  where += heddle::this_worker::runtime() == b ? 10 : 100;
  co_await heddle::schedule(*a);
  where += heddle::this_worker::runtime() == a ? 1000 : 100;
  co_return where;
}

TEST(Coroutine, ScheduleMovesTheCoroutineToARuntime) {
  heddle::runtime a(1), b(1);
  EXPECT_EQ(a.spawn(hops(&a, &b)).get(), 1011);
}

heddle::co_task<long> depth(long n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await depth(n - 1);
}

TEST(Coroutine, AMillionDeepChainUsesNoStack) {
  watchdog dog("Coroutine.AMillionDeepChainUsesNoStack", 120s);
  // A million nested calls would need far more than the worker's 1 MiB stack; the chain's
  // transfers are tail calls. The sanitizer builds' make them plain calls (ThreadSanitizer's hook
  // at every function's entry and exit; AddressSanitizer's build is -O1, which makes no sibling
  // calls): there the chain is shorter, on the default stack.
  constexpr bool calls_are_instrumented = heddle_test::sanitized;
  heddle::runtime rt(heddle::runtime_options{
      .threads = 1, .stack_bytes = calls_are_instrumented ? std::size_t{8} << 20 : std::size_t{1} << 20});
  const long n = calls_are_instrumented ? 2'000 : 1'000'000;
  EXPECT_EQ(rt.spawn(depth(n)).get(), n);
}

heddle::co_task<long> sums_three_tasks(long i, std::atomic<long>* alive) {
  alive_counter here(alive);
  heddle::future<long> a = heddle::task([i] { return i; });
  heddle::future<long> b = heddle::task([i] { return 2 * i; });
  const long c = co_await constant(3);
  co_return co_await std::move(a) + co_await std::move(b) + c;
}

TEST(Coroutine, ManyCoroutinesFromManyThreadsAllCompleteWithTheirResults) {
  watchdog dog("Coroutine.ManyCoroutinesFromManyThreadsAllCompleteWithTheirResults", 120s);
  heddle::runtime rt(4);
  const long per_thread = scaled(20000L, 2000L);
  std::atomic<long> alive{0};
  std::vector<std::thread> spawners;
  std::atomic<long> wrong{0}, total{0};
  for (int t = 0; t < 3; ++t)
    spawners.emplace_back([&, t] {
      std::vector<heddle::future<long>> fs;
      for (long i = 0; i < per_thread; ++i) fs.push_back(rt.spawn(sums_three_tasks(t * per_thread + i, &alive)));
      for (long i = 0; i < per_thread; ++i) {
        const long v = fs[i].get();
        if (v != 3 * (t * per_thread + i) + 3) wrong++;
        total++;
      }
    });
  for (std::thread& s : spawners) s.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(total.load(), 3 * per_thread);
  EXPECT_EQ(alive.load(), 0);
}

heddle::co_task<int> waits_behind(heddle::runtime* rt, int i, std::atomic<long>* alive, std::atomic<long>* finished) {
  alive_counter here(alive);
  const int v = co_await rt->task([i] { return i; });
  finished->fetch_add(1);
  co_return v;
}

TEST(Coroutine, AStoppingRuntimeDestroysQueuedAndSuspendedCoroutines) {
  watchdog dog("Coroutine.AStoppingRuntimeDestroysQueuedAndSuspendedCoroutines", 60s);
  auto rt = std::make_unique<heddle::runtime>(1);
  std::atomic<bool> started{false}, release{false};
  auto blocker = rt->task([&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
  // Queued behind the blocker: coroutines that never start, or (if the worker gets to some before
  // the runtime stops) whose awaited task is queued behind the others.
  const int n = scaled(2000, 300);
  std::atomic<long> alive{0}, finished{0};
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < n; ++i) fs.push_back(rt->spawn(waits_behind(rt.get(), i, &alive, &finished)));
  std::atomic<bool> destroying{false};
  std::thread releaser([&] {
    while (!destroying.load()) std::this_thread::yield();
    std::this_thread::sleep_for(50ms);
    release = true;
  });
  destroying = true;
  rt.reset();
  releaser.join();
  blocker.get();
  int values = 0, cancelled = 0, other = 0;
  for (int i = 0; i < n; ++i) {
    try {
      if (fs[i].get() == i) values++;
      else other++;
    } catch (const heddle::task_cancelled&) {
      cancelled++;
    } catch (...) {
      other++;
    }
  }
  EXPECT_EQ(other, 0);
  EXPECT_EQ(values + cancelled, n);
  EXPECT_EQ(values, finished.load());  // a coroutine that finished gave its value; no other ran on
  EXPECT_EQ(alive.load(), 0);          // every frame destroyed, finished or not
}

// Functions declared to return a heddle::future written as coroutines: they run at once on the
// calling thread up to their first suspension.
heddle::future<int> doubled_now(int v, std::thread::id* ran_on) {
  *ran_on = std::this_thread::get_id();
  co_return 2 * v;
}
heddle::future<int> doubled_later(heddle::runtime* rt, int v) {
  const int w = co_await rt->task([v] { return 2 * v; });
  co_return w;
}
heddle::future<void> throws_after(heddle::runtime* rt) {
  co_await rt->task([] {});
  throw std::runtime_error("after the await");
}

TEST(Coroutine, AFunctionReturningAFutureMayBeACoroutine) {
  heddle::runtime rt(2);
  std::thread::id ran_on;
  heddle::future<int> now = doubled_now(21, &ran_on);
  EXPECT_EQ(ran_on, std::this_thread::get_id());  // started eagerly, here
  EXPECT_TRUE(now.is_ready());
  EXPECT_EQ(now.get(), 42);
  EXPECT_EQ(doubled_later(&rt, 4).get(), 8);
  EXPECT_EQ(rt.execute([&rt] { return doubled_later(&rt, 5).get(); }), 10);
  try {
    throws_after(&rt).get();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "after the await");
  }
  // Many at once from workers, awaiting each other's futures: results checked.
  auto sum = rt.spawn([](heddle::runtime* r) -> heddle::co_task<long> {
    std::vector<heddle::future<int>> fs;
    for (int i = 0; i < 1000; ++i) fs.push_back(doubled_later(r, i));
    long total = 0;
    for (auto& f : fs) total += co_await std::move(f);
    co_return total;
  }(&rt));
  EXPECT_EQ(sum.get(), 999L * 1000);
}

}  // namespace

}  // namespace coroutine_test
