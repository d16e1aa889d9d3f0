// SPDX-License-Identifier: Apache-2.0
// then_in_arena: successors of heddle's engines run as oneTBB tasks inside a task_arena.
#include <gtest/gtest.h>
#include <heddle/async/tbb_arena.hpp>
#include <heddle/heddle.hpp>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;

namespace {

thread_local const oneapi::tbb::task_arena* arena_of_thread = nullptr;

// Marks the threads while they work in one arena, so a successor can tell where it runs.
class arena_marker : public oneapi::tbb::task_scheduler_observer {
 public:
  explicit arena_marker(oneapi::tbb::task_arena& a) : task_scheduler_observer(a), arena_(&a) { observe(true); }
  ~arena_marker() override { observe(false); }
  void on_scheduler_entry(bool) override { arena_of_thread = arena_; }
  void on_scheduler_exit(bool) override { arena_of_thread = nullptr; }

 private:
  const oneapi::tbb::task_arena* arena_;
};

bool inside(const oneapi::tbb::task_arena& arena) { return arena_of_thread == &arena; }

}  // namespace

TEST(TbbArena, TimerSuccessorRunsInTheArena) {
  heddle_test::watchdog dog("TbbArena.TimerSuccessorRunsInTheArena", std::chrono::seconds(60));
  heddle::runtime rt(1);
  oneapi::tbb::task_arena arena(2);
  arena.initialize();
  arena_marker marker(arena);
  const auto start = std::chrono::steady_clock::now();
  auto f = heddle::then_in_arena(heddle::sleep_for(rt, 5ms), arena, [&] {
    return std::make_pair(std::chrono::steady_clock::now() - start >= 5ms, inside(arena));
  });
  auto [late_enough, in_arena] = f.get();
  EXPECT_TRUE(late_enough);
  EXPECT_TRUE(in_arena);
}

TEST(TbbArena, ValuesErrorsAndVoid) {
  heddle_test::watchdog dog("TbbArena.ValuesErrorsAndVoid", std::chrono::seconds(60));
  heddle::runtime rt(1);
  oneapi::tbb::task_arena arena(2);
  arena.initialize();
  arena_marker marker(arena);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::array<std::byte, 8> buf{};
  auto n = heddle::then_in_arena(heddle::io::read(rt, sv[0], buf), arena, [](std::size_t k) { return 10 * k; });
  ASSERT_EQ(write(sv[1], "abc", 3), 3);
  EXPECT_EQ(n.get(), 30u);
  close(sv[1]);
  auto eof = heddle::then_in_arena(heddle::io::read(rt, sv[0], buf), arena, [](std::size_t) { return 1; });
  try {
    eof.get();
    ADD_FAILURE() << "a read at the end of the stream succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), heddle::io::errc::end_of_file);
  }
  close(sv[0]);
  auto thrown = heddle::then_in_arena(rt.task([] { return 1; }), arena,
                                      [](int) -> int { throw std::runtime_error("x"); });
  EXPECT_THROW(thrown.get(), std::runtime_error);
  std::atomic<int> ran{0};
  auto v = heddle::then_in_arena(heddle::sleep_for(rt, 1ms), arena, [&] { ran.fetch_add(1); });
  v.get();
  EXPECT_EQ(ran.load(), 1);
}

// Many promises completed from foreign threads: every successor runs once in the arena.
TEST(TbbArena, StressFromForeignThreads) {
  heddle_test::watchdog dog("TbbArena.StressFromForeignThreads", std::chrono::seconds(120));
  oneapi::tbb::task_arena arena(2);
  arena.initialize();
  arena_marker marker(arena);
  constexpr int threads = 8, per_thread = 2000;
  std::vector<heddle::promise<int>> ps(threads * per_thread);
  std::vector<heddle::future<int>> out;
  std::atomic<int> outside{0};
  for (int i = 0; i < threads * per_thread; ++i)
    out.push_back(heddle::then_in_arena(ps[i].get_future(), arena, [&arena, &outside](int v) {
      if (!inside(arena)) outside.fetch_add(1);
      return v + 1;
    }));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) ps[t * per_thread + i].set_value(t * per_thread + i);
    });
  for (auto& t : ts) t.join();
  long long sum = 0;
  for (auto& f : out) sum += f.get();
  const long long n = threads * per_thread;
  EXPECT_EQ(sum, n * (n - 1) / 2 + n);
  EXPECT_EQ(outside.load(), 0);
}
