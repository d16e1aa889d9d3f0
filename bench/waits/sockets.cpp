// SPDX-License-Identifier: Apache-2.0
// Idle sockets: n socketpairs with a one-byte read pending on one end of each, in heddle's fd
// engine or in one blocked thread per socket. After an idle window (what does waiting cost the CPU
// when nothing happens?), the main thread writes one distinct byte to the other end of every pair,
// in order; the completions are timed from the first write to the last successor's end.
#include <sys/socket.h>
#include <unistd.h>

#include <heddle/heddle.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "probes.hpp"
#include "tally.hpp"
#include "waits.hpp"

namespace heddle::bench::waits {

namespace {

constexpr std::size_t reads_per_task = 256;  // reads per start task

// The byte written to pair i: neighbours differ, so a byte read by the wrong operation shows.
std::byte byte_of(std::size_t i) { return std::byte((i * 131 + 7) & 0xff); }

// n connected AF_UNIX stream pairs: reads wait on read_end[i], the writer writes write_end[i].
struct pairs {
  explicit pairs(std::size_t n) {
    try {
      raise_fd_limit(2 * n + 32);
    } catch (const std::runtime_error&) {
      // The suite chose n to fit (socketpairs_that_fit); if it still does not, socketpair says EMFILE.
    }
    read_end.reserve(n);
    write_end.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        throw std::system_error(errno, std::generic_category(),
                                "waits: socketpair " + std::to_string(i) + " of " + std::to_string(n));
      read_end.push_back(sv[0]);
      write_end.push_back(sv[1]);
    }
  }
  ~pairs() {
    for (int fd : read_end) ::close(fd);
    for (int fd : write_end) ::close(fd);
  }
  // One byte to every pair, in order. The write time of the first.
  clock::time_point write_all() {
    const auto t = clock::now();
    for (std::size_t i = 0; i < write_end.size(); ++i) {
      const std::byte b = byte_of(i);
      ssize_t w;
      do w = ::write(write_end[i], &b, 1);
      while (w < 0 && errno == EINTR);
      if (w != 1)
        throw std::system_error(w < 0 ? errno : EIO, std::generic_category(),
                                "waits: write to pair " + std::to_string(i));
    }
    return t;
  }
  std::vector<int> read_end, write_end;
};

// The idle window: CPU time of every thread but the calling one (which sleeps and reads the
// clocks) while every read waits and nothing happens. From each thread's schedstat, which costs
// only the reader; getrusage would charge its walk over thousands of threads to the window.
// The window opens after a short settling time, so that it does not count the tail of the starts
// (workers finishing their last task and going to sleep).
void idle(run_result& r, double idle_s) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double c0 = others_cpu_seconds();
  const auto t0 = clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
  r.idle_s = seconds(clock::now() - t0);
  const double c1 = others_cpu_seconds();
  if (c0 < 0 || c1 < 0) throw std::runtime_error("waits: /proc/self/task/*/schedstat cannot be read");
  r.idle_cpu_s = c1 - c0;
}

}  // namespace

run_result sockets_heddle(const socket_params& p) {
  run_result r;
  r.n = p.n;
  pairs s(p.n);
  std::vector<std::byte> buf(p.n, std::byte{0});
  tally t(p.n);
  std::vector<heddle::future<void>> futs(p.n);
  heddle::runtime rt(heddle::runtime_options{.threads = p.workers});
  {
    // The fd engine (its epoll set and service thread) exists before the first snapshot.
    pairs warm(1);
    const std::byte b{1};
    if (::write(warm.write_end[0], &b, 1) != 1) throw std::system_error(errno, std::generic_category(), "waits: write");
    std::byte got{};
    heddle::io::read(rt, warm.read_end[0], std::span<std::byte>(&got, 1)).get();
    rt.task([] {}).get();
  }

  const snapshot before = snapshot::take(heddle::core_detail::depot_slabs());
  const auto t0 = clock::now();
  auto root = rt.task([&] {
    std::vector<heddle::future<void>> starters;
    starters.reserve(p.n / reads_per_task + 1);
    for (std::size_t lo = 0; lo < p.n; lo += reads_per_task) {
      const std::size_t hi = std::min<std::size_t>(p.n, lo + reads_per_task);
      starters.push_back(heddle::task([&, lo, hi] {
        for (std::size_t i = lo; i < hi; ++i)
          futs[i] = heddle::io::read(rt, s.read_end[i], std::span<std::byte>(&buf[i], 1))
                        .then(heddle::strategy::normal,
                              [&t, &buf, i](std::size_t n) { t.hit(i, n == 1 && buf[i] == byte_of(i)); });
      }));
    }
    for (auto& st : starters) st.get();
  });
  root.get();
  const auto t1 = clock::now();
  const snapshot after = snapshot::take(heddle::core_detail::depot_slabs());
  if (t.done() != 0)
    throw std::runtime_error("heddle sockets: " + std::to_string(t.done()) +
                             " reads completed before any byte was written");
  idle(r, p.idle_s);

  const double cpu0 = cpu_seconds();
  const auto first_write = s.write_all();
  const bool finished = t.wait(p.timeout_s);
  const double cpu1 = cpu_seconds();
  if (!finished) {
    std::size_t failed = 0, pending = 0;
    std::string first;
    for (auto& f : futs) {
      if (!f.is_ready()) {
        ++pending;
        continue;
      }
      try {
        f.get();
      } catch (const std::exception& e) {
        if (failed++ == 0) first = e.what();
      }
    }
    throw std::runtime_error("heddle sockets: " + std::to_string(t.done()) + " of " + std::to_string(p.n) +
                             " successors ran within " + std::to_string(p.timeout_s) + " s of the first write; " +
                             std::to_string(pending) + " futures not ready, " + std::to_string(failed) + " failed" +
                             (first.empty() ? std::string() : " (the first: " + first + ")"));
  }
  for (auto& f : futs) f.get();
  if (const std::string e = t.check(); !e.empty()) throw std::runtime_error("heddle sockets: " + e);

  r.start_s = seconds(t1 - t0);
  store_delta(r, before, after);
  r.completion_s = double(t.end_ns() - first_write.time_since_epoch().count()) * 1e-9;
  r.completion_cpu_s = cpu1 - cpu0;
  return r;
}

run_result sockets_threads(const socket_params& p) {
  raise_thread_limit();
  run_result r;
  r.n = p.n;
  pairs s(p.n);
  std::vector<std::byte> buf(p.n, std::byte{0});
  tally t(p.n);
  std::atomic<std::size_t> waiting{0};
  std::atomic<int> read_errno{0};
  thread_set threads([&](std::size_t i) {
    waiting.fetch_add(1, std::memory_order_release);
    ssize_t n;
    do n = ::read(s.read_end[i], &buf[i], 1);
    while (n < 0 && errno == EINTR);
    if (n < 0) read_errno.store(errno, std::memory_order_relaxed);
    t.hit(i, n == 1 && buf[i] == byte_of(i));
  });
  threads.reserve(p.n);

  const snapshot before = snapshot::take();
  const auto t0 = clock::now();
  threads.start(p.n);
  while (waiting.load(std::memory_order_acquire) < p.n) std::this_thread::sleep_for(std::chrono::microseconds(200));
  const auto t1 = clock::now();
  const snapshot after = snapshot::take();
  if (t.done() != 0)
    throw std::runtime_error("thread per socket: " + std::to_string(t.done()) +
                             " reads returned before any byte was written");
  idle(r, p.idle_s);

  const double cpu0 = cpu_seconds();
  const auto first_write = s.write_all();
  const bool finished = t.wait(p.timeout_s);
  const double cpu1 = cpu_seconds();
  if (!finished) {
    const std::size_t done = t.done();
    for (int fd : s.read_end) ::shutdown(fd, SHUT_RD);  // the blocked reads return 0: the threads can be joined
    throw std::runtime_error("thread per socket: " + std::to_string(done) + " of " + std::to_string(p.n) +
                             " reads returned within " + std::to_string(p.timeout_s) + " s of the first write");
  }
  threads.join();
  if (std::string e = t.check(); !e.empty()) {
    if (const int err = read_errno.load()) e += std::string("; read(2): ") + std::strerror(err);
    throw std::runtime_error("thread per socket: " + e);
  }

  r.start_s = seconds(t1 - t0);
  store_delta(r, before, after);
  r.completion_s = double(t.end_ns() - first_write.time_since_epoch().count()) * 1e-9;
  r.completion_cpu_s = cpu1 - cpu0;
  return r;
}

}  // namespace heddle::bench::waits
