// SPDX-License-Identifier: Apache-2.0
// heddle::source: read and write sources on pipes (a handler that drains runs once per batch and
// sees every byte; one that leaves data runs again), timer sources (ticks never early, coalesced
// counts, handlers with and without the count), cancel() (its future, no handler after it, from
// inside the handler, twice, on an empty source), destroying a source, bad arguments, a descriptor
// that fails, exceptions from handlers, the runtime's shutdown with live sources; and the
// readiness operations underneath, heddle::io::readable and writable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/dispatch.hpp>
#include <heddle/heddle.hpp>

#include "dispatch_test_support.hpp"

namespace source_test {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using heddle::serial_queue;
using heddle::source;
using heddle_test::check_sys;
using heddle_test::eventually;
using heddle_test::exclusion;
using heddle_test::scaled;
using heddle_test::unique_fd;
using heddle_test::watchdog;

struct fd_pair {
  unique_fd read, write;
};

// A pipe; each end non-blocking if asked.
fd_pair make_pipe(bool nonblocking_read, bool nonblocking_write) {
  int p[2];
  check_sys(::pipe2(p, O_CLOEXEC), "pipe2");
  if (nonblocking_read) check_sys(::fcntl(p[0], F_SETFL, O_NONBLOCK), "fcntl");
  if (nonblocking_write) check_sys(::fcntl(p[1], F_SETFL, O_NONBLOCK), "fcntl");
  return {unique_fd(p[0]), unique_fd(p[1])};
}

// A pipe whose non-blocking read end is a plain descriptor, for tests that close it themselves.
struct raw_pipe {
  int read = -1;
  unique_fd write;
};
raw_pipe make_raw_pipe() {
  int p[2];
  check_sys(::pipe2(p, O_CLOEXEC | O_NONBLOCK), "pipe2");
  return {p[0], unique_fd(p[1])};
}

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t r = ::write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    check_sys(static_cast<int>(r), "write");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

// Fills a non-blocking pipe's write end until it would block; the bytes written.
std::size_t fill(int fd) {
  std::size_t total = 0;
  char buf[4096] = {};
  for (;;) {
    const ssize_t r = ::write(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return total;
    check_sys(static_cast<int>(r), "write");
    total += static_cast<std::size_t>(r);
  }
}

// Counts and checks what a read handler sees: how many calls, bytes, and calls that found nothing.
struct reader_state {
  long calls = 0;  // touched on the queue only
  long bytes = 0;
  long empty_calls = 0;  // a call that found nothing to read
  long pattern_errors = 0;
  bool eof = false;
  std::atomic<long> seen_bytes{0};
  std::atomic<long> seen_calls{0};
};

// Reads everything there is (non-blocking fd); bytes must follow the pattern i % 251.
void drain_fd(int fd, reader_state& st) {
  st.calls++;
  long got = 0;
  char buf[8192];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r > 0) {
      for (ssize_t i = 0; i < r; ++i)
        if (static_cast<unsigned char>(buf[i]) != (st.bytes + i) % 251) st.pattern_errors++;
      st.bytes += r;
      got += r;
      continue;
    }
    if (r == 0) st.eof = true;
    else if (errno == EINTR) continue;
    break;
  }
  if (got == 0 && !st.eof) st.empty_calls++;
  st.seen_bytes.store(st.bytes, std::memory_order_release);
  st.seen_calls.store(st.calls, std::memory_order_release);
}

std::vector<char> pattern(long from, long n) {
  std::vector<char> v(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<char>((from + i) % 251);
  return v;
}

// Ignores SIGPIPE while alive (a write source's peer may close first).
class ignore_sigpipe {
 public:
  ignore_sigpipe() {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &sa, &old_);
  }
  ~ignore_sigpipe() { ::sigaction(SIGPIPE, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

// ---------------------------------------------------------------------------------------------
// Read sources

// A handler that drains the pipe runs once per batch of data, on the queue.
TEST(ReadSource, RunsOncePerBatch) {
  watchdog dog("ReadSource.RunsOncePerBatch", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "reader");
  auto p = make_pipe(true, false);
  reader_state st;
  bool always_on_queue = true;
  const auto first = pattern(0, 1000);
  write_all(p.write.get(), first.data(), first.size());  // there before the source starts
  source s = source::read(p.read.get(), q, [&] {
    always_on_queue = always_on_queue && q.is_current();
    drain_fd(p.read.get(), st);
  });
  ASSERT_TRUE(eventually([&] { return st.seen_bytes.load(std::memory_order_acquire) == 1000; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(st.seen_calls.load(), 1);
  const auto second = pattern(1000, 500);
  write_all(p.write.get(), second.data(), second.size());
  ASSERT_TRUE(eventually([&] { return st.seen_bytes.load(std::memory_order_acquire) == 1500; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(st.seen_calls.load(), 2);
  s.cancel().get();
  EXPECT_TRUE(s.cancelled());
  q.sync([&] {
    EXPECT_EQ(st.empty_calls, 0);
    EXPECT_EQ(st.pattern_errors, 0);
    EXPECT_TRUE(always_on_queue);
  });
}

// A writer thread streams data; the handler sees every byte in order, each call finds data.
TEST(ReadSource, SeesEveryByte) {
  watchdog dog("ReadSource.SeesEveryByte", 120s);
  heddle::runtime rt(2);
  serial_queue q(rt, "stream-reader");
  auto p = make_pipe(true, false);
  reader_state st;
  const long total = scaled(4L << 20, 512L << 10);
  source s = source::read(p.read.get(), q, [&] { drain_fd(p.read.get(), st); });
  std::thread writer([&] {
    long sent = 0;
    std::uint64_t seed = 3;
    while (sent < total) {
      seed = heddle_test::mix(seed);
      const long n = std::min<long>(total - sent, 1 + static_cast<long>(seed % 20000));
      const auto chunk = pattern(sent, n);
      write_all(p.write.get(), chunk.data(), chunk.size());
      sent += n;
      if (seed % 8 == 0) std::this_thread::sleep_for(50us);
    }
  });
  writer.join();
  ASSERT_TRUE(eventually([&] { return st.seen_bytes.load(std::memory_order_acquire) == total; }, 60s));
  s.cancel().get();
  q.sync([&] {
    EXPECT_EQ(st.bytes, total);
    EXPECT_EQ(st.pattern_errors, 0);
    EXPECT_EQ(st.empty_calls, 0);
    EXPECT_GE(st.calls, 1);
  });
}

// A handler that leaves data behind runs again at once: one byte per call.
TEST(ReadSource, HandlerThatLeavesDataRunsAgain) {
  watchdog dog("ReadSource.HandlerThatLeavesDataRunsAgain", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "byte-at-a-time");
  auto p = make_pipe(true, false);
  std::atomic<int> calls{0}, bytes{0};
  source s = source::read(p.read.get(), q, [&] {
    calls++;
    char c;
    if (::read(p.read.get(), &c, 1) == 1) bytes++;
  });
  const auto data = pattern(0, 100);
  write_all(p.write.get(), data.data(), data.size());
  ASSERT_TRUE(eventually([&] { return bytes.load() == 100; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(calls.load(), 100);
  EXPECT_EQ(bytes.load(), 100);
  s.cancel().get();
}

// The end of the stream counts as readable; the handler cancels its own source there, and the
// cancel future (taken inside the handler) becomes ready once the handler has returned.
TEST(ReadSource, CancelFromTheHandlerAtTheEnd) {
  watchdog dog("ReadSource.CancelFromTheHandlerAtTheEnd", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "eof-reader");
  auto p = make_pipe(true, false);
  reader_state st;
  std::optional<source> s;
  heddle::future<void> stopped;  // set on the queue
  std::atomic<bool> have_future{false};
  std::atomic<int> calls_after_eof{0};
  // The source is made inside the queue, so the handler (on the queue too) sees `s` set.
  q.sync([&] {
    s.emplace(source::read(p.read.get(), q, [&] {
      if (st.eof) calls_after_eof++;
      drain_fd(p.read.get(), st);
      if (st.eof && !have_future.load()) {
        stopped = s->cancel();
        EXPECT_FALSE(stopped.is_ready());  // the handler is still running
        have_future = true;
      }
    }));
  });
  const auto data = pattern(0, 3000);
  write_all(p.write.get(), data.data(), data.size());
  p.write.reset();  // the end of the stream
  ASSERT_TRUE(eventually([&] { return have_future.load(); }));
  heddle::future<void> f = q.sync([&] { return std::move(stopped); });
  f.get();
  EXPECT_TRUE(s->cancelled());
  std::this_thread::sleep_for(20ms);
  q.sync([&] {
    EXPECT_EQ(st.bytes, 3000);
    EXPECT_TRUE(st.eof);
    EXPECT_EQ(st.pattern_errors, 0);
  });
  EXPECT_EQ(calls_after_eof.load(), 0);
  // Now the descriptor may be closed.
  p.read.reset();
  s.reset();
}

// ---------------------------------------------------------------------------------------------
// Write sources

// The handler writes while the pipe has room; a reader thread checks every byte; the handler
// cancels its source when everything is written.
TEST(WriteSource, WritesEverything) {
  watchdog dog("WriteSource.WritesEverything", 120s);
  ignore_sigpipe no_sigpipe;
  heddle::runtime rt(2);
  serial_queue q(rt, "writer");
  auto p = make_pipe(false, true);
  const long total = scaled(4L << 20, 512L << 10);
  long written = 0;  // on the queue
  long calls = 0, full_calls = 0;
  std::optional<source> s;
  heddle::future<void> stopped;
  std::atomic<bool> done{false};
  q.sync([&] {
    s.emplace(source::write(p.write.get(), q, [&] {
      calls++;
      bool wrote = false;
      while (written < total) {
        const long n = std::min<long>(total - written, 16384);
        const auto chunk = pattern(written, n);
        const ssize_t r = ::write(p.write.get(), chunk.data(), chunk.size());
        if (r <= 0) break;  // EAGAIN: full; the next call comes when there is room
        written += r;
        wrote = true;
      }
      if (!wrote) full_calls++;
      if (written == total && !done.load()) {
        stopped = s->cancel();
        done = true;
      }
    }));
  });
  long received = 0, errors = 0;
  std::thread reader([&] {
    std::vector<char> buf(65536);
    for (;;) {
      const ssize_t r = ::read(p.read.get(), buf.data(), buf.size());
      if (r <= 0) break;
      for (ssize_t i = 0; i < r; ++i)
        if (static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]) != (received + i) % 251) errors++;
      received += r;
      if (received == total) break;
    }
  });
  reader.join();
  ASSERT_TRUE(eventually([&] { return done.load(); }));
  q.sync([&] { return std::move(stopped); }).get();
  EXPECT_EQ(received, total);
  EXPECT_EQ(errors, 0);
  q.sync([&] {
    EXPECT_EQ(written, total);
    EXPECT_EQ(full_calls, 0);  // each call found room
    EXPECT_GE(calls, 1);
  });
}

// A full pipe: the handler does not run until a reader makes room.
TEST(WriteSource, WaitsForRoom) {
  watchdog dog("WriteSource.WaitsForRoom", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "blocked-writer");
  auto p = make_pipe(true, true);
  const std::size_t capacity = fill(p.write.get());
  ASSERT_GT(capacity, 0u);
  std::atomic<int> calls{0};
  source s = source::write(p.write.get(), q, [&] {
    calls++;
    fill(p.write.get());
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(calls.load(), 0);
  // Drain it all: writable again.
  std::vector<char> buf(capacity + 4096);
  std::size_t drained = 0;
  while (drained < capacity) {
    const ssize_t r = ::read(p.read.get(), buf.data(), buf.size());
    ASSERT_GT(r, 0);
    drained += static_cast<std::size_t>(r);
  }
  EXPECT_TRUE(eventually([&] { return calls.load() >= 1; }));
  s.cancel().get();
  const int after = calls.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(calls.load(), after);
}

// ---------------------------------------------------------------------------------------------
// Timer sources

// Ticks come at start + k * interval, never earlier; the counts passed to the handler add up to the
// deadlines that have passed.
TEST(TimerSource, TicksNeverEarly) {
  watchdog dog("TimerSource.TicksNeverEarly", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "ticker");
  const auto interval = 5ms;
  long sum = 0, calls = 0, early = 0;  // on the queue
  std::atomic<long> seen{0};
  bool on_queue = true;
  const auto start = clock_type::now();  // before the source's own start
  source s = source::timer(interval, q, [&](std::uint64_t n) {
    EXPECT_GE(n, 1u);
    sum += static_cast<long>(n);
    calls++;
    on_queue = on_queue && q.is_current();
    const long due = static_cast<long>((clock_type::now() - start) / interval);
    if (sum > due) early++;
    seen.store(sum);
  });
  ASSERT_TRUE(eventually([&] { return seen.load() >= 20; }));
  s.cancel().get();
  const auto stopped_at = clock_type::now();
  q.sync([&] {
    EXPECT_EQ(early, 0);
    EXPECT_TRUE(on_queue);
    EXPECT_LE(sum, static_cast<long>((stopped_at - start) / interval));
    EXPECT_LE(calls, sum);
  });
  // No handler after the cancel future.
  const long frozen = seen.load();
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(seen.load(), frozen);
}

// Intervals at the top of the clock's range: the first tick is one interval away, past the end of
// the clock, so the handler never runs (as after() saturates such a delay to "never").
TEST(TimerSource, HugeIntervalsNeverTick) {
  watchdog dog("TimerSource.HugeIntervalsNeverTick", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "huge-interval");
  const std::chrono::nanoseconds intervals[] = {
      std::chrono::nanoseconds::max(), std::chrono::nanoseconds::max() - std::chrono::seconds(1),
      std::chrono::hours(24 * 365 * 250)};  // the last one fits: now + interval is in range
  std::atomic<int> calls[3] = {};
  std::vector<source> sources;
  for (int i = 0; i < 3; ++i) sources.push_back(source::timer(intervals[i], q, [&calls, i] { calls[i]++; }));
  std::this_thread::sleep_for(50ms);
  q.sync([] {});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(calls[i].load(), 0) << "interval " << intervals[i].count() << " ns";
  for (auto& s : sources) s.cancel().get();
}

// A handler without an argument runs once per (coalesced) batch.
TEST(TimerSource, HandlerWithoutCount) {
  watchdog dog("TimerSource.HandlerWithoutCount", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "plain-ticker");
  std::atomic<int> calls{0};
  const auto start = clock_type::now();
  clock_type::time_point first;
  source s = source::timer(2ms, q, [&] {
    if (calls.load() == 0) first = clock_type::now();
    calls++;
  });
  ASSERT_TRUE(eventually([&] { return calls.load() >= 10; }));
  s.cancel().get();
  EXPECT_GE(q.sync([&] { return first; }) - start, 2ms);  // the first one interval from now
  const int frozen = calls.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(calls.load(), frozen);
}

// Deadlines that pass while the queue is busy are coalesced into one call with their number.
TEST(TimerSource, CoalescesWhileTheQueueIsBusy) {
  watchdog dog("TimerSource.CoalescesWhileTheQueueIsBusy", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "busy-ticker");
  std::uint64_t max_n = 0, sum = 0;  // on the queue
  std::atomic<std::uint64_t> seen{0};
  const auto start = clock_type::now();
  source s = source::timer(2ms, q, [&](std::uint64_t n) {
    max_n = std::max(max_n, n);
    sum += n;
    seen.store(sum);
  });
  q.async([] { std::this_thread::sleep_for(100ms); });  // about 50 deadlines pass meanwhile
  ASSERT_TRUE(eventually([&] { return seen.load() >= 40; }));
  s.cancel().get();
  const auto stopped_at = clock_type::now();
  q.sync([&] {
    EXPECT_GE(max_n, 2u);
    EXPECT_LE(sum, static_cast<std::uint64_t>((stopped_at - start) / 2ms));
  });
}

// cancel() from the timer's own handler: no call after it.
TEST(TimerSource, CancelFromTheHandler) {
  watchdog dog("TimerSource.CancelFromTheHandler", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "self-cancelling-ticker");
  std::optional<source> s;
  int calls = 0;  // on the queue
  heddle::future<void> stopped;
  std::atomic<bool> have{false};
  q.sync([&] {
    s.emplace(source::timer(1ms, q, [&] {
      ++calls;
      if (calls == 3) {
        stopped = s->cancel();
        have = true;
      }
    }));
  });
  ASSERT_TRUE(eventually([&] { return have.load(); }));
  q.sync([&] { return std::move(stopped); }).get();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.sync([&] { return calls; }), 3);
}

// Cancelling many times, and the calls on an empty source.
TEST(TimerSource, CancelTwiceAndEmptySources) {
  watchdog dog("TimerSource.CancelTwiceAndEmptySources", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "twice");
  source s = source::timer(1h, q, [] {});
  EXPECT_FALSE(s.cancelled());
  auto a = s.cancel();
  auto b = s.cancel();
  EXPECT_TRUE(s.cancelled());
  a.get();
  b.get();
  auto c = s.cancel();  // after it stopped: ready at once
  EXPECT_TRUE(c.is_ready());
  c.get();
  source empty;
  EXPECT_TRUE(empty.cancelled());
  EXPECT_THROW((void)empty.cancel(), std::logic_error);
  source moved = std::move(s);
  EXPECT_THROW((void)s.cancel(), std::logic_error);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(moved.cancelled());
  // Move assignment over a live source cancels the old one.
  std::atomic<int> old_calls{0};
  source live = source::timer(1ms, q, [&] { old_calls++; });
  ASSERT_TRUE(eventually([&] { return old_calls.load() >= 1; }));
  live = source::timer(1h, q, [] {});
  std::this_thread::sleep_for(10ms);  // a handler already queued may still finish
  const int frozen = old_calls.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(old_calls.load(), frozen);
  live.cancel().get();
}

// ---------------------------------------------------------------------------------------------
// Destroying, errors, arguments

// Destroying the source cancels it: no handler starts afterwards, and the handler's captures are
// released once nothing is outstanding.
TEST(SourceLifetime, DestroyingTheSourceCancels) {
  watchdog dog("SourceLifetime.DestroyingTheSourceCancels", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "destroyed-sources");
  auto live = heddle_test::live_counter();
  std::atomic<int> timer_calls{0}, read_calls{0};
  auto p = make_pipe(true, false);
  {
    source t = source::timer(1ms, q, [&, k = heddle_test::tracked(live)] { timer_calls++; });
    source r = source::read(p.read.get(), q, [&, k = heddle_test::tracked(live)] {
      read_calls++;
      char buf[64];
      while (::read(p.read.get(), buf, sizeof buf) > 0) {
      }
    });
    ASSERT_TRUE(eventually([&] { return timer_calls.load() >= 3; }));
  }
  // A handler already queued when the source went away does not start (checked on the queue).
  q.sync([] {});
  const int timer_frozen = timer_calls.load();
  write_all(p.write.get(), "data", 4);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(timer_calls.load(), timer_frozen);
  EXPECT_EQ(read_calls.load(), 0);
  EXPECT_TRUE(eventually([&] { return live->load() == 0; }));
}

// The handler destroys its own source: no call after it, the handler (destroyed once its call has
// returned) is released.
TEST(SourceLifetime, DestroyedFromItsOwnHandler) {
  watchdog dog("SourceLifetime.DestroyedFromItsOwnHandler", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "self-destroying");
  auto live = heddle_test::live_counter();
  std::optional<source> s;  // on the queue
  int calls = 0;
  q.sync([&] {
    s.emplace(source::timer(1ms, q, [&, k = heddle_test::tracked(live)] {
      if (++calls == 2) s.reset();
    }));
  });
  ASSERT_TRUE(eventually([&] { return live->load() == 0; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.sync([&] { return calls; }), 2);
  EXPECT_FALSE(q.sync([&] { return s.has_value(); }));
}

// A source on a suspended queue, both dropped: the queue's last handle went away while it was
// suspended, so its items (the source's handler and finish items) are discarded, and the source
// with its handler goes too.
TEST(SourceLifetime, DroppedWithItsSuspendedQueue) {
  watchdog dog("SourceLifetime.DroppedWithItsSuspendedQueue", 60s);
  heddle::runtime rt(2);
  auto live = heddle_test::live_counter();
  std::atomic<int> calls{0};
  {
    serial_queue q(rt, "suspended-with-source");
    q.suspend();
    source s = source::timer(1ms, q, [&, k = heddle_test::tracked(live)] { calls++; });
    std::this_thread::sleep_for(10ms);  // a handler item waits in the suspended queue
  }
  EXPECT_TRUE(eventually([&] { return live->load() == 0; }, 3s)) << "the source's handler was never destroyed";
  EXPECT_EQ(calls.load(), 0);
}

TEST(SourceArguments, BadDescriptorThrowsSystemError) {
  heddle::runtime rt(1);
  serial_queue q(rt, "bad-fd");
  auto live = heddle_test::live_counter();
  auto code_of = [](auto&& make) {
    try {
      make();
    } catch (const std::system_error& e) {
      return e.code().value();
    }
    return 0;
  };
  EXPECT_EQ(code_of([&] { (void)source::read(-1, q, [k = heddle_test::tracked(live)] {}); }), EBADF);
  EXPECT_EQ(code_of([&] { (void)source::write(-5, q, [k = heddle_test::tracked(live)] {}); }), EBADF);
  const int closed = heddle_test::not_open_fd();
  EXPECT_EQ(code_of([&] { (void)source::read(closed, q, [k = heddle_test::tracked(live)] {}); }), EBADF);
  EXPECT_EQ(live->load(), 0);  // the handlers were destroyed
  serial_queue moved_from = q;
  serial_queue taken = std::move(moved_from);
  auto p = make_pipe(true, true);
  EXPECT_THROW((void)source::read(p.read.get(), moved_from, [k = heddle_test::tracked(live)] {}), std::logic_error);
  EXPECT_EQ(live->load(), 0);
}

// A regular file is not a descriptor epoll accepts: the contract says the call throws.
TEST(SourceArguments, RegularFileThrowsSystemError) {
  watchdog dog("SourceArguments.RegularFileThrowsSystemError", 60s);
  heddle::runtime rt(1);
  serial_queue q(rt, "regular-file");
  char path[] = "/tmp/heddle-source-test-XXXXXX";
  unique_fd f(check_sys(::mkstemp(path), "mkstemp"));
  ::unlink(path);
  std::atomic<int> calls{0};
  std::optional<source> s;
  EXPECT_THROW(s.emplace(source::read(f.get(), q, [&] { calls++; })), std::system_error);
  if (s) {
    std::this_thread::sleep_for(20ms);
    ADD_FAILURE() << "the source started; its handler ran " << calls.load() << " times in 20 ms";
    s->cancel().get();
  }
}

TEST(SourceArguments, IntervalMustBePositive) {
  heddle::runtime rt(1);
  serial_queue q(rt, "bad-interval");
  auto live = heddle_test::live_counter();
  EXPECT_THROW((void)source::timer(0ms, q, [k = heddle_test::tracked(live)] {}), std::invalid_argument);
  EXPECT_THROW((void)source::timer(-1s, q, [k = heddle_test::tracked(live)] {}), std::invalid_argument);
  EXPECT_THROW((void)source::timer(std::chrono::nanoseconds(0), q, [k = heddle_test::tracked(live)] {}),
               std::invalid_argument);
  EXPECT_EQ(live->load(), 0);
  // The smallest positive interval is fine (a sub-nanosecond one rounds up to 1 ns).
  std::atomic<int> calls{0};
  source s = source::timer(std::chrono::duration<double, std::nano>(0.25), q, [&] { calls++; });
  EXPECT_TRUE(eventually([&] { return calls.load() >= 1; }));
  s.cancel().get();
}

// Handler exceptions go to the queue's error handler; the source goes on.
TEST(SourceErrors, HandlerExceptionsGoToTheErrorHandler) {
  watchdog dog("SourceErrors.HandlerExceptionsGoToTheErrorHandler", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "throwing-handlers");
  std::vector<std::string> errors;  // on the queue
  std::atomic<int> error_count{0};
  q.set_error_handler([&](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      errors.push_back(x.what());
    }
    error_count++;
  });
  std::atomic<int> calls{0};
  source s = source::timer(1ms, q, [&] {
    calls++;
    throw std::runtime_error("tick failed");
  });
  ASSERT_TRUE(eventually([&] { return error_count.load() >= 5; }));
  s.cancel().get();
  q.sync([&] {
    EXPECT_EQ(static_cast<int>(errors.size()), calls.load());
    for (const auto& e : errors) EXPECT_EQ(e, "tick failed");
  });
}

// The handler closes its descriptor: the next wait fails with EBADF, which goes to the queue's
// error handler, and the source stops (its cancel future is ready).
TEST(SourceErrors, DescriptorClosedByTheHandlerIsReported) {
  watchdog dog("SourceErrors.DescriptorClosedByTheHandlerIsReported", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "closing-handler");
  auto p = make_raw_pipe();
  std::vector<int> codes;  // on the queue
  std::atomic<int> reported{0};
  q.set_error_handler([&](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::system_error& x) {
      codes.push_back(x.code().value());
    } catch (...) {
      codes.push_back(-1);
    }
    reported++;
  });
  std::atomic<int> calls{0};
  const int fd = p.read;
  source s = source::read(fd, q, [&] {
    calls++;
    ::close(fd);  // closed under the source
  });
  write_all(p.write.get(), "x", 1);
  ASSERT_TRUE(eventually([&] { return reported.load() == 1; }));
  s.cancel().get();
  EXPECT_TRUE(s.cancelled());
  EXPECT_EQ(calls.load(), 1);
  q.sync([&] {
    ASSERT_EQ(codes.size(), 1u);
    EXPECT_EQ(codes[0], EBADF);
  });
}

// Closed from outside while the source waits for it: epoll forgets the descriptor silently, so (as
// the contract warns) nothing is reported and no handler runs; cancel() still ends the source.
TEST(SourceErrors, DescriptorClosedWhileWaitingStillCancels) {
  watchdog dog("SourceErrors.DescriptorClosedWhileWaitingStillCancels", 60s);
  heddle::runtime rt(2);
  serial_queue q(rt, "closed-outside");
  auto p = make_raw_pipe();
  std::atomic<int> reported{0}, calls{0};
  q.set_error_handler([&](std::exception_ptr) { reported++; });
  const int fd = p.read;
  source s = source::read(fd, q, [&] { calls++; });
  std::this_thread::sleep_for(20ms);  // the wait is armed
  ::close(fd);
  std::this_thread::sleep_for(20ms);
  auto stopped = s.cancel();
  EXPECT_TRUE(eventually([&] { return stopped.is_ready(); }, 10s));
  stopped.get();
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(reported.load(), 0);
}

// Handlers run on their queue: they never overlap with its other items or with each other.
TEST(SourceQueue, HandlersAndItemsNeverOverlap) {
  watchdog dog("SourceQueue.HandlersAndItemsNeverOverlap", 120s);
  heddle::runtime rt(4);
  serial_queue q(rt, "shared-by-sources");
  exclusion inside;
  const int pipes = 8;
  std::vector<fd_pair> ps;
  std::vector<reader_state> states(pipes);
  std::vector<source> sources;
  for (int i = 0; i < pipes; ++i) ps.push_back(make_pipe(true, false));
  for (int i = 0; i < pipes; ++i)
    sources.push_back(source::read(ps[i].read.get(), q, [&, i] {
      exclusion::scope sc(inside);
      drain_fd(ps[i].read.get(), states[i]);
    }));
  std::atomic<long> ticks{0};
  sources.push_back(source::timer(1ms, q, [&](std::uint64_t n) {
    exclusion::scope sc(inside);
    ticks += static_cast<long>(n);
  }));
  const long per = scaled(256L << 10, 32L << 10);
  std::vector<std::thread> writers;
  for (int i = 0; i < pipes; ++i)
    writers.emplace_back([&, i] {
      long sent = 0;
      while (sent < per) {
        const long n = std::min<long>(per - sent, 3000 + 100 * i);
        const auto chunk = pattern(sent, n);
        write_all(ps[i].write.get(), chunk.data(), chunk.size());
        sent += n;
      }
    });
  std::atomic<bool> stop{false};
  std::thread items([&] {
    while (!stop.load()) {
      q.async([&] { exclusion::scope sc(inside); });
      std::this_thread::sleep_for(50us);
    }
  });
  for (auto& w : writers) w.join();
  for (int i = 0; i < pipes; ++i)
    ASSERT_TRUE(eventually([&] { return states[i].seen_bytes.load(std::memory_order_acquire) == per; }, 60s)) << i;
  stop = true;
  items.join();
  for (auto& s : sources) s.cancel().get();
  q.sync([&] {
    for (int i = 0; i < pipes; ++i) {
      EXPECT_EQ(states[i].pattern_errors, 0) << i;
      EXPECT_EQ(states[i].empty_calls, 0) << i;
    }
  });
  EXPECT_EQ(inside.overlaps(), 0);
  EXPECT_GT(ticks.load(), 0);
}

// ---------------------------------------------------------------------------------------------
// The runtime's shutdown

// A runtime destroyed with live sources (a timer, a reader waiting, a writer waiting on a full
// pipe, a reader whose handler item is queued behind a busy item): no hang, no handler after it,
// pending cancel futures become ready, and the handlers' captures are destroyed (some sources are
// dropped before the runtime, the others after).
TEST(SourceShutdown, RuntimeDestroyedWithLiveSources) {
  watchdog dog("SourceShutdown.RuntimeDestroyedWithLiveSources", 120s);
  for (int round = 0; round < scaled(10, 4); ++round) {
    auto live = heddle_test::live_counter();
    auto rt = std::make_unique<heddle::runtime>(2);
    std::optional<serial_queue> q;
    q.emplace(*rt, "shutdown-sources");
    auto reader_pipe = make_pipe(true, false);
    auto busy_pipe = make_pipe(true, false);
    auto full_pipe = make_pipe(true, true);
    fill(full_pipe.write.get());
    std::atomic<int> calls{0};
    std::vector<source> kept;
    kept.push_back(source::timer(1ms, *q, [&, k = heddle_test::tracked(live)] { calls++; }));
    kept.push_back(source::read(reader_pipe.read.get(), *q, [&, k = heddle_test::tracked(live)] { calls++; }));
    kept.push_back(source::write(full_pipe.write.get(), *q, [&, k = heddle_test::tracked(live)] { calls++; }));
    source dropped_early = source::timer(2ms, *q, [&, k = heddle_test::tracked(live)] { calls++; });
    kept.push_back(source::read(busy_pipe.read.get(), *q, [&, k = heddle_test::tracked(live)] {
      calls++;
      char buf[16];
      while (::read(busy_pipe.read.get(), buf, sizeof buf) > 0) {
      }
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 4));
    q->async([] { std::this_thread::sleep_for(5ms); });
    write_all(busy_pipe.write.get(), "x", 1);
    auto pending_cancel = kept[0].cancel();
    dropped_early = source();
    q.reset();  // the sources hold the queue
    {
      watchdog inner("destroying a runtime with live sources", 30s);
      rt.reset();
    }
    EXPECT_TRUE(pending_cancel.is_ready());
    pending_cancel.get();
    const int frozen = calls.load();
    // After the runtime: cancelling is harmless and ready at once; dropping releases everything.
    for (auto& s : kept) {
      auto f = s.cancel();
      EXPECT_TRUE(f.is_ready());
    }
    kept.clear();
    EXPECT_EQ(calls.load(), frozen);
    EXPECT_EQ(live->load(), 0) << "round " << round;
  }
}

// ---------------------------------------------------------------------------------------------
// io::readable / io::writable

TEST(IoReadiness, ReadableWhenDataOrEndOfStream) {
  watchdog dog("IoReadiness.ReadableWhenDataOrEndOfStream", 60s);
  heddle::runtime rt(2);
  auto p = make_pipe(true, false);
  auto f = heddle::io::readable(rt, p.read.get());
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(f.is_ready());
  write_all(p.write.get(), "abc", 3);
  f.get();
  // Nothing was consumed.
  char buf[8];
  EXPECT_EQ(::read(p.read.get(), buf, sizeof buf), 3);
  // Already readable: ready at once (the end of the stream counts).
  p.write.reset();
  heddle::io::readable(rt, p.read.get()).get();
  EXPECT_EQ(::read(p.read.get(), buf, sizeof buf), 0);
  // The descriptor's mode is left alone.
  auto q = make_pipe(false, false);
  write_all(q.write.get(), "z", 1);
  heddle::io::readable(rt, q.read.get()).get();
  EXPECT_EQ(::fcntl(q.read.get(), F_GETFL) & O_NONBLOCK, 0);
  // From a worker, on the worker's runtime.
  auto t = rt.task([&] {
    heddle::io::readable(q.read.get()).get();
    return 1;
  });
  EXPECT_EQ(*t, 1);
}

TEST(IoReadiness, WritableWhenThereIsRoom) {
  watchdog dog("IoReadiness.WritableWhenThereIsRoom", 60s);
  heddle::runtime rt(2);
  auto p = make_pipe(true, true);
  heddle::io::writable(rt, p.write.get()).get();  // empty pipe
  const std::size_t capacity = fill(p.write.get());
  auto f = heddle::io::writable(rt, p.write.get());
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(f.is_ready());
  std::vector<char> buf(capacity);
  std::size_t drained = 0;
  while (drained < capacity) {
    const ssize_t r = ::read(p.read.get(), buf.data(), buf.size());
    ASSERT_GT(r, 0);
    drained += static_cast<std::size_t>(r);
  }
  f.get();
  // A reader that went away: writable (the write reports EPIPE).
  fill(p.write.get());
  auto g = heddle::io::writable(rt, p.write.get());
  p.read.reset();
  g.get();
}

TEST(IoReadiness, CancelAndBadDescriptor) {
  watchdog dog("IoReadiness.CancelAndBadDescriptor", 60s);
  heddle::runtime rt(2);
  auto p = make_pipe(true, false);
  heddle::cancellation_source c;
  auto f = heddle::io::readable(rt, p.read.get(), c.token());
  auto g = heddle::io::readable(rt, p.read.get(), c.token());
  c.cancel();
  EXPECT_EQ(heddle_test::outcome_text(f), "operation_cancelled");
  EXPECT_EQ(heddle_test::outcome_text(g), "operation_cancelled");
  heddle::cancellation_source already;
  already.cancel();
  auto h = heddle::io::writable(rt, p.write.get(), already.token());
  const std::string o = heddle_test::outcome_text(h);
  EXPECT_TRUE(o == "operation_cancelled" || o == "ok") << o;  // ready at once, or cancelled
  // Not a number just closed (see not_open_fd): the suite hung once here when it was (clang + UBSan;
  // the wait queued, and neither a file nor an epoll registration left on the number).
  const int closed = heddle_test::not_open_fd();
  auto bad = heddle::io::readable(rt, closed);
  EXPECT_EQ(heddle_test::outcome_text(bad), "EBADF");
  auto bad_w = heddle::io::writable(rt, -1);
  EXPECT_EQ(heddle_test::outcome_text(bad_w), "EBADF");
  // The wait is still usable afterwards.
  write_all(p.write.get(), "k", 1);
  heddle::io::readable(rt, p.read.get()).get();
}

// A runtime destroyed while readiness waits are pending: they fail with task_cancelled.
TEST(IoReadiness, ShutdownCancelsPendingWaits) {
  watchdog dog("IoReadiness.ShutdownCancelsPendingWaits", 60s);
  auto p = make_pipe(true, true);
  fill(p.write.get());
  auto rt = std::make_unique<heddle::runtime>(1);
  auto r = heddle::io::readable(*rt, p.read.get());  // there is data: ready at once
  auto empty = make_pipe(true, false);
  auto waiting_r = heddle::io::readable(*rt, empty.read.get());
  auto waiting_w = heddle::io::writable(*rt, p.write.get());
  rt.reset();
  EXPECT_EQ(heddle_test::outcome_text(r), "ok");
  EXPECT_EQ(heddle_test::outcome_text(waiting_r), "task_cancelled");
  EXPECT_EQ(heddle_test::outcome_text(waiting_w), "task_cancelled");
}

}  // namespace

}  // namespace source_test
