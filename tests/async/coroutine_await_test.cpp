// SPDX-License-Identifier: Apache-2.0
// Coroutines awaiting the async layer's operations: timers, promises completed by other threads,
// stream I/O on a pipe, and cancellation at each of those suspension points. While they wait they
// hold no worker: a runtime of one worker runs many at once.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::watchdog;

heddle::co_task<int> sleeps_then_counts(std::atomic<int>* asleep, std::atomic<int>* peak, std::chrono::milliseconds d) {
  const int now = asleep->fetch_add(1) + 1;
  int seen = peak->load();
  while (now > seen && !peak->compare_exchange_weak(seen, now)) {
  }
  co_await heddle::sleep_for(d);
  asleep->fetch_sub(1);
  co_return 1;
}

TEST(CoroutineAwait, SleepingCoroutinesHoldNoWorker) {
  watchdog dog("CoroutineAwait.SleepingCoroutinesHoldNoWorker", 60s);
  heddle::runtime rt(1);
  const int n = scaled(2000, 300);
  std::atomic<int> asleep{0}, peak{0};
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < n; ++i) fs.push_back(rt.spawn(sleeps_then_counts(&asleep, &peak, 200ms)));
  int done = 0;
  for (auto& f : fs) done += f.get();
  EXPECT_EQ(done, n);
  EXPECT_EQ(asleep.load(), 0);
  // Most of them asleep at once on the one worker (the first wake-up comes 200 ms after the first
  // sleep began).
  EXPECT_GT(peak.load(), n / 2);
}

heddle::co_task<std::string> awaits_promise(heddle::future<std::string> f) {
  std::string s = co_await std::move(f);
  co_return s + "!";
}

TEST(CoroutineAwait, APromiseFulfilledByAnotherThreadResumesTheCoroutine) {
  heddle::runtime rt(2);
  for (int round = 0; round < scaled(200, 40); ++round) {
    heddle::promise<std::string> p;
    heddle::future<std::string> result = rt.spawn(awaits_promise(p.get_future()));
    std::thread t([&p, round] {
      if (round % 2) std::this_thread::sleep_for(100us);  // before or after the coroutine suspends
      p.set_value("round " + std::to_string(round));
    });
    EXPECT_EQ(result.get(), "round " + std::to_string(round) + "!");
    t.join();
  }
  heddle::promise<int> broken_later;
  heddle::future<int> f = broken_later.get_future();
  auto waiting = rt.spawn([](heddle::future<int> g) -> heddle::co_task<int> {
    co_return co_await std::move(g);
  }(std::move(f)));
  broken_later.set_exception(std::make_exception_ptr(std::runtime_error("failed")));
  EXPECT_THROW(waiting.get(), std::runtime_error);
}

heddle::co_task<std::string> reads_a_line(int fd, heddle::cancellation_token token) {
  std::string got;
  char buf[64];
  while (got.find('\n') == std::string::npos) {
    const std::size_t n = co_await heddle::io::read(fd, std::as_writable_bytes(std::span(buf)), token);
    if (n == 0) break;
    got.append(buf, n);
  }
  co_return got;
}

TEST(CoroutineAwait, StreamReadsInALoop) {
  heddle::runtime rt(1);
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  heddle::future<std::string> line = rt.spawn(reads_a_line(p[0], {}));
  std::thread writer([w = p[1]] {
    for (const char* part : {"hel", "lo ", "wor", "ld\n"}) {
      std::this_thread::sleep_for(2ms);
      ASSERT_EQ(::write(w, part, std::strlen(part)), static_cast<ssize_t>(std::strlen(part)));
    }
  });
  EXPECT_EQ(line.get(), "hello world\n");
  writer.join();
  ::close(p[0]);
  ::close(p[1]);
}

heddle::co_task<int> sleeps_cancellably(heddle::cancellation_token token, std::atomic<bool>* after) {
  co_await heddle::sleep_for(10s, token);
  after->store(true);  // never: the sleep was cancelled
  co_return 0;
}

TEST(CoroutineAwait, CancellationReachesTheAwaitedOperation) {
  watchdog dog("CoroutineAwait.CancellationReachesTheAwaitedOperation", 60s);
  heddle::runtime rt(1);
  // A timer and a read, each cancelled while the coroutine waits on it: the coroutine sees
  // operation_cancelled at that co_await, and nothing after it runs.
  heddle::cancellation_source timer_source, read_source;
  std::atomic<bool> after{false};
  heddle::future<int> sleeping = rt.spawn(sleeps_cancellably(timer_source.token(), &after));
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  heddle::future<std::string> reading = rt.spawn(reads_a_line(p[0], read_source.token()));
  std::this_thread::sleep_for(20ms);
  timer_source.cancel();
  read_source.cancel();
  EXPECT_THROW(sleeping.get(), heddle::operation_cancelled);
  EXPECT_THROW(reading.get(), heddle::operation_cancelled);
  EXPECT_FALSE(after.load());
  // A token cancelled before the coroutine awaits: the operation fails at once.
  heddle::cancellation_source early;
  early.cancel();
  EXPECT_THROW(rt.spawn(sleeps_cancellably(early.token(), &after)).get(), heddle::operation_cancelled);
  EXPECT_FALSE(after.load());
  ::close(p[0]);
  ::close(p[1]);
}

heddle::co_task<int> awaits_promise(heddle::future<int> f, bool by_reference, std::atomic<long>* alive,
                                    std::atomic<long>* resumed) {
  heddle_test::alive_counter here(alive);
  int v = by_reference ? co_await f : co_await std::move(f);
  resumed->fetch_add(1);
  co_return v;
}

// Two coroutines on copies of one shared_future, one by reference and one by value.
heddle::co_task<int> awaits_shared(heddle::shared_future<int> f, bool by_reference, std::atomic<long>* alive,
                                   std::atomic<long>* resumed) {
  heddle_test::alive_counter here(alive);
  int v = by_reference ? co_await f : co_await heddle::shared_future<int>(f);
  resumed->fetch_add(1);
  co_return v;
}

TEST(CoroutineAwait, ARuntimeThatStopsDestroysCoroutinesSuspendedOnSharedFutures) {
  watchdog dog("CoroutineAwait.ARuntimeThatStopsDestroysCoroutinesSuspendedOnSharedFutures", 60s);
  const int n = scaled(500, 100);
  std::vector<heddle::promise<int>> promises(n);
  std::vector<heddle::future<int>> fs;
  std::atomic<long> alive{0}, resumed{0};
  {
    heddle::runtime rt(2);
    for (int i = 0; i < n; ++i) {
      heddle::shared_future<int> sf = promises[i].get_future().share();
      fs.push_back(rt.spawn(awaits_shared(sf, true, &alive, &resumed)));
      fs.push_back(rt.spawn(awaits_shared(sf, false, &alive, &resumed)));
    }
    while (alive.load() != 2 * n) std::this_thread::yield();
  }
  EXPECT_EQ(alive.load(), 0);  // every frame destroyed with the runtime
  for (auto& f : fs) EXPECT_THROW(f.get(), heddle::task_cancelled);
  for (auto& p : promises) p.set_value(1);  // the relays find nobody to resume, and go
  EXPECT_EQ(resumed.load(), 0);
  // Completed while the runtime runs: every one resumes with the value.
  heddle::runtime rt(2);
  heddle::promise<int> p;
  heddle::shared_future<int> sf = p.get_future().share();
  std::vector<heddle::future<int>> live;
  for (int i = 0; i < 100; ++i) live.push_back(rt.spawn(awaits_shared(sf, i % 2 == 0, &alive, &resumed)));
  while (alive.load() != 100) std::this_thread::yield();
  p.set_value(5);
  for (auto& f : live) EXPECT_EQ(f.get(), 5);
  EXPECT_EQ(resumed.load(), 100);
}

TEST(CoroutineAwait, ARuntimeThatStopsDestroysCoroutinesSuspendedOnFuturesNothingCompletes) {
  watchdog dog("CoroutineAwait.ARuntimeThatStopsDestroysCoroutinesSuspendedOnFuturesNothingCompletes", 60s);
  const int n = scaled(1000, 200);
  std::vector<heddle::promise<int>> promises(n);
  std::vector<heddle::future<int>> fs;
  std::atomic<long> alive{0}, resumed{0};
  {
    heddle::runtime rt(2);
    for (int i = 0; i < n; ++i)
      fs.push_back(rt.spawn(awaits_promise(promises[i].get_future(), i % 2 == 0, &alive, &resumed)));
    while (alive.load() != n) std::this_thread::yield();  // every one suspended on its promise
  }                            // the promises outlive the runtime: nothing would ever resume these coroutines
  EXPECT_EQ(alive.load(), 0);  // every frame destroyed with the runtime
  for (auto& f : fs) EXPECT_THROW(f.get(), heddle::task_cancelled);
  for (auto& p : promises) p.set_value(1);  // completes states nobody waits on any more
  EXPECT_EQ(resumed.load(), 0);
}

// A value that counts its instances: a future's state that is never let go keeps its value, and the
// count then stays above zero.
struct counted {
  std::atomic<long>* n;
  explicit counted(std::atomic<long>* c) : n(c) { n->fetch_add(1); }
  counted(const counted& o) : n(o.n) { n->fetch_add(1); }
  ~counted() { n->fetch_sub(1); }
};

heddle::co_task<int> awaits_counted(heddle::future<counted> f, bool by_reference, std::atomic<long>* alive) {
  heddle_test::alive_counter here(alive);
  if (by_reference) (void)co_await f;
  else (void)co_await std::move(f);
  co_return 1;
}

// The futures that destroyed coroutines were waiting on are let go with them, whether the runtime
// took the coroutine back from the future (nothing completed it) or discarded its resumption (the
// future completed while the runtime stopped): once the promises are gone too, no state keeps its
// value.
TEST(CoroutineAwait, DestroyedCoroutinesLetGoOfTheFuturesTheyAwaited) {
  watchdog dog("CoroutineAwait.DestroyedCoroutinesLetGoOfTheFuturesTheyAwaited", 120s);
  const int rounds = scaled(10, 3), n = scaled(400, 100);
  for (int round = 0; round < rounds; ++round) {
    std::atomic<long> alive{0}, values{0};
    {
      std::vector<heddle::promise<counted>> promises(n);
      std::vector<heddle::future<int>> fs;
      std::atomic<bool> go{false};
      auto rt = std::make_unique<heddle::runtime>(2);
      for (int i = 0; i < n; ++i) fs.push_back(rt->spawn(awaits_counted(promises[i].get_future(), i % 3 == 0, &alive)));
      while (alive.load() != n) std::this_thread::yield();
      // Odd rounds fulfil half the promises while the runtime stops (some resumptions discarded,
      // some run), even rounds none until it is gone (every chain taken back and destroyed).
      std::thread fulfiller([&] {
        while (!go.load()) std::this_thread::yield();
        if (round % 2)
          for (int i = 0; i < n; i += 2) promises[i].set_value(counted(&values));
      });
      go = true;
      rt.reset();
      fulfiller.join();
      EXPECT_EQ(alive.load(), 0);
      for (int i = 0; i < n; ++i) {
        try {
          (void)fs[i].get();
        } catch (const heddle::task_cancelled&) {
        }
        if (round % 2 == 0 || i % 2) promises[i].set_value(counted(&values));
      }
    }  // the promises go: every state is freed, and its value with it
    EXPECT_EQ(values.load(), 0) << "round " << round << ": a state some coroutine awaited was never let go";
  }
}

TEST(CoroutineAwait, CompletionsRacingARuntimesEndResumeOrDestroyEachCoroutineOnce) {
  watchdog dog("CoroutineAwait.CompletionsRacingARuntimesEndResumeOrDestroyEachCoroutineOnce", 120s);
  const int rounds = scaled(20, 5), n = scaled(400, 100);
  for (int round = 0; round < rounds; ++round) {
    std::vector<heddle::promise<int>> promises(n);
    std::vector<heddle::future<int>> fs;
    std::atomic<long> alive{0}, resumed{0};
    std::atomic<bool> go{false};
    auto rt = std::make_unique<heddle::runtime>(2);
    for (int i = 0; i < n; ++i) {
      if (i % 4 == 3)
        fs.push_back(rt->spawn(awaits_shared(promises[i].get_future().share(), i % 8 == 3, &alive, &resumed)));
      else fs.push_back(rt->spawn(awaits_promise(promises[i].get_future(), i % 3 == 0, &alive, &resumed)));
    }
    while (alive.load() != n) std::this_thread::yield();
    // Another thread fulfils the promises while the runtime stops: each coroutine either resumes
    // (its value) or is destroyed (task_cancelled), never both, never neither.
    std::thread fulfiller([&] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < n; ++i) promises[i].set_value(i);
    });
    go = true;
    rt.reset();
    fulfiller.join();
    EXPECT_EQ(alive.load(), 0);
    long values = 0, cancelled = 0, other = 0;
    for (int i = 0; i < n; ++i) {
      try {
        if (fs[i].get() == i) ++values;
        else ++other;
      } catch (const heddle::task_cancelled&) {
        ++cancelled;
      } catch (...) {
        ++other;
      }
    }
    EXPECT_EQ(other, 0);
    EXPECT_EQ(values + cancelled, n);
    EXPECT_EQ(values, resumed.load());
  }
}

// A runtime of 8 workers (more than this machine's cores: they preempt each other) whose
// coroutines suspend and resume side by side, listed on every stripe of the runtime's list of
// suspended chains, while 4 threads complete what they wait on in an order of their own; then a
// second batch that nothing completes, destroyed with the runtime. Each coroutine of the first batch
// resumes once with its own value, each of the second is destroyed once.
TEST(CoroutineAwait, ManyWorkersSuspendAndResumeSideBySide) {
  watchdog dog("CoroutineAwait.ManyWorkersSuspendAndResumeSideBySide", 120s);
  const int n = scaled(8000, 1000), fulfillers = 4, never = scaled(500, 100);
  std::vector<heddle::promise<int>> promises(n), unkept(never);
  std::vector<heddle::future<int>> fs, abandoned;
  std::atomic<long> alive{0}, resumed{0}, alive_unkept{0}, resumed_unkept{0};
  {
    heddle::runtime rt(8);
    std::atomic<int> spawned{0};
    std::vector<std::thread> threads;
    for (int k = 0; k < fulfillers; ++k)
      threads.emplace_back([&, k] {
        // Thread k completes promises k, k + 4, ... as soon as each one's coroutine is spawned,
        // while the spawning goes on: some before their coroutine suspends, most after.
        for (int i = k; i < n; i += fulfillers) {
          while (spawned.load(std::memory_order_acquire) <= i) std::this_thread::yield();
          promises[i].set_value(i);
        }
      });
    fs.reserve(n);
    for (int i = 0; i < n; ++i) {
      fs.push_back(rt.spawn(awaits_promise(promises[i].get_future(), i % 2 == 0, &alive, &resumed)));
      spawned.store(i + 1, std::memory_order_release);
    }
    for (auto& t : threads) t.join();
    for (int i = 0; i < n; ++i) EXPECT_EQ(fs[i].get(), i);
    EXPECT_EQ(resumed.load(), n);
    for (int i = 0; i < never; ++i)
      abandoned.push_back(rt.spawn(awaits_promise(unkept[i].get_future(), i % 2 == 1, &alive_unkept, &resumed_unkept)));
    while (alive_unkept.load() != never) std::this_thread::yield();
  }
  EXPECT_EQ(alive.load(), 0);
  EXPECT_EQ(alive_unkept.load(), 0);  // destroyed with the runtime
  for (auto& f : abandoned) EXPECT_THROW(f.get(), heddle::task_cancelled);
  EXPECT_EQ(resumed_unkept.load(), 0);
}

// A file read with pread (the io_uring engine, or its threads) and a child process's exit, awaited
// one after the other by one coroutine.
heddle::co_task<std::string> reads_file_then_waits(int fd, std::size_t size, pid_t child, int* exit_code) {
  std::string text(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const std::size_t n = co_await heddle::io::pread(fd, std::as_writable_bytes(std::span(text)).subspan(got), got);
    if (n == 0) break;
    got += n;
  }
  text.resize(got);
  *exit_code = co_await heddle::io::wait_process(child);
  co_return text;
}

TEST(CoroutineAwait, FileReadsAndChildProcesses) {
  watchdog dog("CoroutineAwait.FileReadsAndChildProcesses", 60s);
  heddle::runtime rt(1);
  char path[] = "/tmp/heddle_co_file_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  std::string content;
  for (int i = 0; i < 2000; ++i) content += "line " + std::to_string(i) + "\n";
  ASSERT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  pid_t child = 0;
  char arg0[] = "/bin/sh", arg1[] = "-c", arg2[] = "exit 7";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  ASSERT_EQ(::posix_spawn(&child, "/bin/sh", nullptr, nullptr, argv, environ), 0);
  int code = -1;
  EXPECT_EQ(rt.spawn(reads_file_then_waits(fd, content.size(), child, &code)).get(), content);
  EXPECT_TRUE(WIFEXITED(code));
  EXPECT_EQ(WEXITSTATUS(code), 7);  // wait_process gives the wait status
  ::close(fd);
}

heddle::co_task<long> sums_when_all(heddle::runtime* rt) {
  auto [a, b] = co_await heddle::when_all(rt->task([] { return 40L; }), rt->task([] { return 2; }));
  co_return a + b;
}

TEST(CoroutineAwait, WhenAllOfTasks) {
  heddle::runtime rt(2);
  EXPECT_EQ(rt.spawn(sums_when_all(&rt)).get(), 42);
}

}  // namespace
