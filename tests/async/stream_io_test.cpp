// SPDX-License-Identifier: Apache-2.0
// Stream I/O through the fd engine (heddle::io::read, write, accept, connect) on pipes, socketpairs,
// TCP and eventfds: data both ways, waiting for readiness, partial writes, every error path
// (end of stream, ECONNRESET, EBADF, EPIPE without SIGPIPE, ECONNREFUSED), cancellation with a
// token (and the descriptor still usable afterwards), the start-order guarantee per descriptor and
// direction, and a runtime destroyed with operations pending.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "async_test_support.hpp"

namespace stream_io_test {
namespace {

using namespace std::chrono_literals;
using heddle_test::scaled;
using heddle_test::watchdog;
using heddle_test::unique_fd;
using heddle_test::check_sys;
using heddle_test::describe;
using heddle_test::chain;
using heddle_test::outcome_text;
namespace io = heddle::io;

// ---------------------------------------------------------------------------------------------
// Helpers: descriptors, plain (non-heddle) I/O used as the reference, outcomes as text.

struct fd_pair {
  unique_fd a, b;
};

fd_pair make_socketpair() {
  int sv[2];
  check_sys(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair");
  return {unique_fd(sv[0]), unique_fd(sv[1])};
}

// a: the read end, b: the write end.
fd_pair make_pipe() {
  int p[2];
  check_sys(::pipe2(p, O_CLOEXEC), "pipe2");
  return {unique_fd(p[0]), unique_fd(p[1])};
}

// A TCP socket listening on 127.0.0.1 at a port the kernel picks; *addr receives the address.
unique_fd make_listener(sockaddr_in* addr, int backlog = SOMAXCONN) {
  unique_fd l(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  int one = 1;
  ::setsockopt(l.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  check_sys(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), "bind");
  check_sys(::listen(l.get(), backlog), "listen");
  socklen_t len = sizeof a;
  check_sys(::getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len), "getsockname");
  *addr = a;
  return l;
}

// a: the connecting side, b: the accepted side; both blocking, made with plain system calls.
fd_pair make_tcp_pair() {
  sockaddr_in addr{};
  unique_fd l = make_listener(&addr);
  unique_fd c(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  check_sys(::connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), "connect");
  unique_fd s(check_sys(::accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC), "accept4"));
  return {std::move(c), std::move(s)};
}

// Closes a TCP socket so that the peer sees a reset (RST) instead of an orderly end.
void close_with_reset(unique_fd& fd) {
  linger lg{1, 0};
  check_sys(::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg), "SO_LINGER");
  fd.reset();
}

bool is_nonblocking(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_NONBLOCK) != 0;
}

std::span<const std::byte> cbytes(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }
std::span<std::byte> wbytes(std::string& s) { return std::as_writable_bytes(std::span(s.data(), s.size())); }

void wait_fd(int fd, short events) {
  pollfd p{fd, events, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

// Plain writes and reads: the reference the engine is checked against. Work on blocking and
// non-blocking descriptors alike.
void plain_write_all(int fd, std::string_view s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait_fd(fd, POLLOUT);
    } else {
      throw std::system_error(errno, std::generic_category(), "plain write");
    }
  }
}

std::string plain_read_exact(int fd, std::size_t want) {
  std::string s(want, '\0');
  std::size_t off = 0;
  while (off < want) {
    ssize_t n = ::read(fd, s.data() + off, want - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
    } else if (n == 0) {
      throw std::runtime_error("plain read: unexpected end of stream after " + std::to_string(off) + " bytes");
    } else if (errno == EINTR) {
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      wait_fd(fd, POLLIN);
    } else {
      throw std::system_error(errno, std::generic_category(), "plain read");
    }
  }
  return s;
}

bool readable_now(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

// Fills a socket's send path until the next write would block; returns the bytes written.
std::size_t fill_socket(int fd, char byte = 'f') {
  std::string chunk(4096, byte);
  std::size_t total = 0;
  for (;;) {
    ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      total += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return total;
    } else {
      throw std::system_error(errno, std::generic_category(), "fill_socket");
    }
  }
}

// Small socket buffers make "full" quick to reach.
void small_buffers(int fd) {
  int sz = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
}

// Counts SIGPIPE while alive (the default action would kill the test program instead).
std::atomic<int> g_sigpipes{0};
extern "C" void count_sigpipe(int) { g_sigpipes.fetch_add(1, std::memory_order_relaxed); }

class sigpipe_counter {
 public:
  sigpipe_counter() {
    g_sigpipes.store(0);
    struct sigaction sa {};
    sa.sa_handler = &count_sigpipe;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGPIPE, &sa, &old_);
  }
  ~sigpipe_counter() { ::sigaction(SIGPIPE, &old_, nullptr); }
  int count() const { return g_sigpipes.load(); }

 private:
  struct sigaction old_ {};
};

// ---------------------------------------------------------------------------------------------
// Data both ways.

TEST(StreamIo, PipeWriteThenRead) {
  watchdog dog("StreamIo.PipeWriteThenRead", 60s);
  heddle::runtime rt(2);
  auto p = make_pipe();
  const std::string msg = "hello through a pipe";
  auto w = io::write(rt, p.b.get(), cbytes(msg));
  EXPECT_EQ(*w, msg.size());
  std::string got(64, '\0');
  auto r = io::read(rt, p.a.get(), wbytes(got));
  ASSERT_EQ(*r, msg.size());
  EXPECT_EQ(got.substr(0, *r), msg);
  // The engine switched both descriptors to non-blocking mode on first use.
  EXPECT_TRUE(is_nonblocking(p.a.get()));
  EXPECT_TRUE(is_nonblocking(p.b.get()));
}

TEST(StreamIo, SocketpairBothDirections) {
  watchdog dog("StreamIo.SocketpairBothDirections", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  for (int round = 0; round < 20; ++round) {
    std::string ping = "ping " + std::to_string(round), pong = "pong " + std::to_string(round);
    std::string in_b(ping.size(), '\0'), in_a(pong.size(), '\0');
    auto rb = io::read(rt, s.b.get(), wbytes(in_b));
    auto ra = io::read(rt, s.a.get(), wbytes(in_a));
    EXPECT_EQ(*io::write(rt, s.a.get(), cbytes(ping)), ping.size());
    EXPECT_EQ(*io::write(rt, s.b.get(), cbytes(pong)), pong.size());
    ASSERT_EQ(*rb, ping.size());
    ASSERT_EQ(*ra, pong.size());
    EXPECT_EQ(in_b, ping);
    EXPECT_EQ(in_a, pong);
  }
}

TEST(StreamIo, ReadWaitsForData) {
  watchdog dog("StreamIo.ReadWaitsForData", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  std::string buf(100, '\0');
  auto r = io::read(rt, s.a.get(), wbytes(buf));
  EXPECT_FALSE(r.is_ready());  // nothing to read yet: it waits in the engine
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(r.is_ready());
  plain_write_all(s.b.get(), "late data");
  ASSERT_EQ(*r, 9u);
  EXPECT_EQ(buf.substr(0, 9), "late data");
}

TEST(StreamIo, WriteWaitsForSpace) {
  watchdog dog("StreamIo.WriteWaitsForSpace", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  small_buffers(s.a.get());
  small_buffers(s.b.get());
  const std::size_t filled = fill_socket(s.a.get());
  ASSERT_GT(filled, 0u);
  std::string msg(3000, 'm');
  for (std::size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<char>('a' + i % 26);
  auto w = io::write(rt, s.a.get(), cbytes(msg));
  EXPECT_FALSE(w.is_ready());  // the socket is full: it waits in the engine
  // Drain from the other side until the write has gone through.
  std::string received;
  while (!w.is_ready() || readable_now(s.b.get())) {
    char tmp[8192];
    if (!readable_now(s.b.get())) {
      std::this_thread::sleep_for(1ms);
      continue;
    }
    ssize_t n = ::read(s.b.get(), tmp, sizeof tmp);
    ASSERT_GT(n, 0);
    received.append(tmp, static_cast<std::size_t>(n));
  }
  const std::size_t n = *w;
  ASSERT_GE(n, 1u);
  ASSERT_LE(n, msg.size());
  ASSERT_EQ(received.size(), filled + n);
  EXPECT_EQ(received.substr(0, filled), std::string(filled, 'f'));
  EXPECT_EQ(received.substr(filled), msg.substr(0, n));
}

TEST(StreamIo, PartialWriteReturnsFewerBytes) {
  watchdog dog("StreamIo.PartialWriteReturnsFewerBytes", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  small_buffers(s.a.get());
  std::string big(std::size_t{8} << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(heddle_test::mix(i) & 0xff);
  auto w = io::write(rt, s.a.get(), cbytes(big));  // nobody reads: only what fits goes out
  const std::size_t n = *w;
  ASSERT_GE(n, 1u);
  ASSERT_LT(n, big.size());
  std::string got = plain_read_exact(s.b.get(), n);
  EXPECT_TRUE(got == big.substr(0, n)) << "the bytes written are not the start of the buffer";
  EXPECT_FALSE(readable_now(s.b.get())) << "more bytes arrived than the write reported";
}

struct transfer {
  heddle::runtime* rt;
  int wfd, rfd;
  std::string data;
  std::string received;
  std::size_t chunk;
  chain writer, reader;
  std::atomic<std::size_t> partial_writes{0};

  void write_from(std::size_t off) {
    if (off == data.size()) return writer.finish();
    const std::size_t len = std::min(chunk, data.size() - off);
    writer.step([&] {
      return io::write(*rt, wfd, cbytes(data).subspan(off, len))
          .then(heddle::strategy::normal, [this, off, len](std::size_t n) {
            if (n == 0 || n > len) throw std::runtime_error("write returned " + std::to_string(n));
            if (n < len) partial_writes++;
            write_from(off + n);
          });
    });
  }
  void read_from(std::size_t off) {
    if (off == data.size()) return reader.finish();
    const std::size_t len = std::min(chunk, data.size() - off);
    reader.step([&] {
      return io::read(*rt, rfd, wbytes(received).subspan(off, len))
          .then(heddle::strategy::normal, [this, off, len](std::size_t n) {
            if (n == 0 || n > len) throw std::runtime_error("read returned " + std::to_string(n));
            read_from(off + n);
          });
    });
  }
};

TEST(StreamIo, LargeTransfersThroughContinuationChains) {
  watchdog dog("StreamIo.LargeTransfersThroughContinuationChains", 120s);
  heddle::runtime rt(2);
  const std::size_t size = scaled<std::size_t>(8 << 20, 1 << 20);
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "pipe" : "socketpair");
    fd_pair p = kind == 0 ? make_pipe() : make_socketpair();
    auto t = std::make_unique<transfer>();
    t->rt = &rt;
    t->rfd = p.a.get();
    t->wfd = p.b.get();
    t->data.resize(size);
    for (std::size_t i = 0; i < size; ++i) t->data[i] = static_cast<char>(heddle_test::mix(i * 7 + kind) & 0xff);
    t->received.assign(size, '\0');
    t->chunk = 256 << 10;  // larger than a pipe's or socket's buffer: writes go partial
    t->read_from(0);
    t->write_from(0);
    EXPECT_EQ(t->writer.join(), "finished");
    EXPECT_EQ(t->reader.join(), "finished");
    EXPECT_TRUE(t->received == t->data) << "the bytes read differ from the bytes written";
    // A pipe holds 64 KiB and a non-blocking write copies only what fits at that moment, so the
    // first 256 KiB write is partial; a socketpair usually goes partial too, but not certainly.
    if (kind == 0) {
      EXPECT_GT(t->partial_writes.load(), 0u) << "no partial write happened";
    }
    RecordProperty(kind == 0 ? "pipe_partial_writes" : "socketpair_partial_writes",
                   static_cast<int>(t->partial_writes.load()));
  }
}

TEST(StreamIo, EventfdReadAndWrite) {
  watchdog dog("StreamIo.EventfdReadAndWrite", 60s);
  heddle::runtime rt(2);
  unique_fd efd(check_sys(::eventfd(0, EFD_CLOEXEC), "eventfd"));
  std::uint64_t in = 0;
  auto r = io::read(rt, efd.get(), std::as_writable_bytes(std::span(&in, 1)));
  EXPECT_FALSE(r.is_ready());
  const std::uint64_t five = 5;
  EXPECT_EQ(*io::write(rt, efd.get(), std::as_bytes(std::span(&five, 1))), 8u);
  EXPECT_EQ(*r, 8u);
  EXPECT_EQ(in, 5u);
}

TEST(StreamIo, EmptyBuffersTransferNothing) {
  watchdog dog("StreamIo.EmptyBuffersTransferNothing", 60s);
  heddle::runtime rt(2);
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "pipe" : "socketpair");
    fd_pair p = kind == 0 ? make_pipe() : make_socketpair();
    // "At least one byte, unless the buffer is empty": an empty read is no end of stream, and
    // takes nothing.
    auto r = io::read(rt, p.a.get(), std::span<std::byte>{});
    auto w = io::write(rt, p.b.get(), std::span<const std::byte>{});
    ASSERT_EQ(outcome_text(w), "ok");
    EXPECT_EQ(*w, 0u);
    plain_write_all(p.b.get(), "z");
    ASSERT_EQ(outcome_text(r), "ok");
    EXPECT_EQ(*r, 0u);
    EXPECT_EQ(plain_read_exact(p.a.get(), 1), "z");
  }
}

// io.hpp: "A read or write of zero bytes completes at once with 0", even where a read of one byte
// would wait for data and a write for space.
TEST(StreamIo, ZeroByteOperationsCompleteAtOnce) {
  watchdog dog("StreamIo.ZeroByteOperationsCompleteAtOnce", 60s);
  heddle::runtime rt(2);
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind == 0 ? "pipe" : kind == 1 ? "socketpair" : "TCP");
    fd_pair p = kind == 0 ? make_pipe() : kind == 1 ? make_socketpair() : make_tcp_pair();
    auto r = io::read(rt, p.a.get(), std::span<std::byte>{});
    EXPECT_TRUE(r.is_ready()) << "an empty read waits for data";
    ASSERT_EQ(outcome_text(r), "ok");
    EXPECT_EQ(*r, 0u);
  }
  auto s = make_socketpair();
  small_buffers(s.a.get());
  fill_socket(s.a.get());
  auto w = io::write(rt, s.a.get(), std::span<const std::byte>{});
  EXPECT_TRUE(w.is_ready()) << "an empty write waits for space";
  ASSERT_EQ(outcome_text(w), "ok");
  EXPECT_EQ(*w, 0u);
}

// io.hpp: pipes, eventfds... are switched to non-blocking mode (O_NONBLOCK) on first use.
TEST(StreamIo, NonSocketDescriptorsAreSwitchedToNonBlockingMode) {
  watchdog dog("StreamIo.NonSocketDescriptorsAreSwitchedToNonBlockingMode", 60s);
  heddle::runtime rt(2);
  auto p = make_pipe();
  unique_fd efd(check_sys(::eventfd(0, EFD_CLOEXEC), "eventfd"));
  ASSERT_FALSE(is_nonblocking(p.a.get()));
  std::string buf(4, '\0');
  auto r = io::read(rt, p.a.get(), wbytes(buf));  // waits
  EXPECT_TRUE(is_nonblocking(p.a.get()));
  EXPECT_EQ(*io::write(rt, p.b.get(), cbytes("abcd")), 4u);  // completes at once
  EXPECT_TRUE(is_nonblocking(p.b.get()));
  EXPECT_EQ(*r, 4u);
  const std::uint64_t one = 1;
  EXPECT_EQ(*io::write(rt, efd.get(), std::as_bytes(std::span(&one, 1))), 8u);
  EXPECT_TRUE(is_nonblocking(efd.get()));
}

// io.hpp: sockets are read and written with MSG_DONTWAIT and keep their mode (blocking or not);
// the sockets given to accept and connect are switched to non-blocking mode.
TEST(StreamIo, SocketsKeepTheirModeExceptForAcceptAndConnect) {
  watchdog dog("StreamIo.SocketsKeepTheirModeExceptForAcceptAndConnect", 60s);
  heddle::runtime rt(2);
  {
    SCOPED_TRACE("blocking socketpair");
    auto s = make_socketpair();
    std::string buf(4, '\0');
    auto r = io::read(rt, s.a.get(), wbytes(buf));  // waits in the engine, not in recv(2) here
    EXPECT_FALSE(r.is_ready());
    EXPECT_FALSE(is_nonblocking(s.a.get()));
    EXPECT_EQ(*io::write(rt, s.b.get(), cbytes("abcd")), 4u);
    EXPECT_FALSE(is_nonblocking(s.b.get()));
    EXPECT_EQ(*r, 4u);
    // Full, and blocking: a write waits in the engine all the same.
    small_buffers(s.a.get());
    const std::size_t filled = fill_socket(s.a.get());
    auto w = io::write(rt, s.a.get(), cbytes("more"));
    EXPECT_FALSE(w.is_ready());
    EXPECT_EQ(plain_read_exact(s.b.get(), filled), std::string(filled, 'f'));
    ASSERT_EQ(outcome_text(w), "ok");
    EXPECT_FALSE(is_nonblocking(s.a.get()));
  }
  {
    SCOPED_TRACE("non-blocking socketpair");
    int sv[2];
    check_sys(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), "socketpair");
    unique_fd a(sv[0]), b(sv[1]);
    std::string buf(4, '\0');
    auto r = io::read(rt, a.get(), wbytes(buf));
    EXPECT_EQ(*io::write(rt, b.get(), cbytes("wxyz")), 4u);
    EXPECT_EQ(*r, 4u);
    EXPECT_TRUE(is_nonblocking(a.get()));
    EXPECT_TRUE(is_nonblocking(b.get()));
  }
  {
    SCOPED_TRACE("accept and connect");
    sockaddr_in addr{};
    unique_fd l = make_listener(&addr);
    ASSERT_FALSE(is_nonblocking(l.get()));
    unique_fd c(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
    auto acc = io::accept(rt, l.get());
    auto con = io::connect(rt, c.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    EXPECT_EQ(outcome_text(con), "ok");
    ASSERT_EQ(outcome_text(acc), "ok");
    unique_fd s(*acc);
    EXPECT_TRUE(is_nonblocking(l.get()));
    EXPECT_TRUE(is_nonblocking(c.get()));
    EXPECT_TRUE(is_nonblocking(s.get()));
  }
}

TEST(StreamIo, ManyDescriptorsAtOnce) {
  watchdog dog("StreamIo.ManyDescriptorsAtOnce", 60s);
  heddle::runtime rt(2);
  const int n = scaled(300, 60);
  std::vector<fd_pair> pipes;
  std::vector<std::string> bufs(n, std::string(16, '\0'));
  std::vector<heddle::future<std::size_t>> reads;
  for (int i = 0; i < n; ++i) {
    pipes.push_back(make_pipe());
    reads.push_back(io::read(rt, pipes[i].a.get(), wbytes(bufs[i])));
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(42));
  for (int i : order) plain_write_all(pipes[i].b.get(), "pipe#" + std::to_string(i));
  for (int i = 0; i < n; ++i) {
    const std::string want = "pipe#" + std::to_string(i);
    ASSERT_EQ(*reads[i], want.size()) << "pipe " << i;
    EXPECT_EQ(bufs[i].substr(0, want.size()), want);
  }
}

TEST(StreamIo, OperationsStartedInATaskBelongToItsRuntime) {
  watchdog dog("StreamIo.OperationsStartedInATaskBelongToItsRuntime", 60s);
  auto rt = std::make_unique<heddle::runtime>(2);
  auto p = make_pipe();
  std::string buf(8, '\0');
  // Without a runtime argument, inside a task of rt: the read is rt's.
  auto outer = rt->task([&] { return io::read(p.a.get(), wbytes(buf)); });
  heddle::future<std::size_t> r = std::move(outer).get();
  EXPECT_FALSE(r.is_ready());
  rt.reset();  // a read of rt's engine is cancelled; one of the default runtime's would stay pending
  plain_write_all(p.b.get(), "x");
  EXPECT_EQ(outcome_text(r), "task_cancelled");
}

TEST(StreamIo, ForcingAnIoFutureOnTheOnlyWorker) {
  watchdog dog("StreamIo.ForcingAnIoFutureOnTheOnlyWorker", 60s);
  heddle::runtime rt(1);
  auto s = make_socketpair();
  auto result = rt.task([&] {
    std::string buf(6, '\0');
    auto r = io::read(s.a.get(), wbytes(buf));
    // The writer is a task queued behind this one on the only worker: forcing the read must run
    // it (or sleep) rather than wait in a system call.
    auto writer = heddle::task([&] { return *io::write(s.b.get(), cbytes("worker")); });
    const std::size_t n = *r;
    EXPECT_EQ(*writer, 6u);
    return buf.substr(0, n);
  });
  EXPECT_EQ(*result, "worker");
}

// The engine must not trust what it remembers about a descriptor number: once closed, the number
// comes back for a new file that is blocking and not registered anywhere.
TEST(StreamIo, DescriptorNumberReusedAfterClose) {
  watchdog dog("StreamIo.DescriptorNumberReusedAfterClose", 60s);
  heddle::runtime rt(2);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto p1 = make_pipe();
    const int number = p1.a.get();
    std::string buf(8, '\0');
    auto r1 = io::read(rt, number, wbytes(buf));  // waits: registered with the engine
    plain_write_all(p1.b.get(), "first");
    ASSERT_EQ(*r1, 5u);
    p1.a.reset();
    p1.b.reset();
    auto p2 = make_pipe();
    if (p2.a.get() != number) {
      check_sys(::dup3(p2.a.get(), number, O_CLOEXEC), "dup3");
      p2.a = unique_fd(number);
    }
    ASSERT_FALSE(is_nonblocking(number));
    // Should the engine wrongly read without switching the new file to non-blocking mode, this
    // thread would block in read(2): then the rescuer writes after a while to free it, and the
    // checks below report it.
    std::mutex m;
    std::condition_variable cv;
    bool started = false;
    std::thread rescuer([&] {
      std::unique_lock lock(m);
      if (!cv.wait_for(lock, 5s, [&] { return started; })) plain_write_all(p2.b.get(), "rescue");
    });
    auto r2 = io::read(rt, number, wbytes(buf));
    {
      std::lock_guard lock(m);
      started = true;
    }
    cv.notify_all();
    rescuer.join();
    const bool waited = !r2.is_ready();
    EXPECT_TRUE(is_nonblocking(number)) << "the reused number was not switched to O_NONBLOCK";
    EXPECT_TRUE(waited) << "the read completed without data";
    plain_write_all(p2.b.get(), "second");
    ASSERT_EQ(outcome_text(r2), "ok");
    EXPECT_EQ(buf.substr(0, *r2), "second");
  }
}

TEST(StreamIo, DefaultRuntimeOverloadsFromAPlainThread) {
  watchdog dog("StreamIo.DefaultRuntimeOverloadsFromAPlainThread", 60s);
  auto s = make_socketpair();
  std::string got(5, '\0');
  auto r = io::read(s.a.get(), wbytes(got));
  EXPECT_EQ(*io::write(s.b.get(), cbytes("hello")), 5u);
  EXPECT_EQ(*r, 5u);
  EXPECT_EQ(got, "hello");
}

// ---------------------------------------------------------------------------------------------
// Connecting and accepting.

TEST(StreamIo, AcceptAndConnect) {
  watchdog dog("StreamIo.AcceptAndConnect", 60s);
  heddle::runtime rt(2);
  sockaddr_in addr{};
  unique_fd l = make_listener(&addr);
  auto a = io::accept(rt, l.get());
  EXPECT_FALSE(a.is_ready());  // nobody has connected yet
  unique_fd c(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  sockaddr_in scratch = addr;
  auto con = io::connect(rt, c.get(), reinterpret_cast<const sockaddr*>(&scratch), sizeof scratch);
  std::memset(&scratch, 0xff, sizeof scratch);  // the address was copied by the call
  EXPECT_EQ(outcome_text(con), "ok");
  ASSERT_EQ(outcome_text(a), "ok");
  unique_fd s(*a);
  ASSERT_GE(s.get(), 0);
  EXPECT_TRUE(is_nonblocking(s.get())) << "accepted sockets are non-blocking";
  EXPECT_TRUE(::fcntl(s.get(), F_GETFD) & FD_CLOEXEC) << "accepted sockets are close-on-exec";
  EXPECT_TRUE(is_nonblocking(c.get())) << "connect switches the socket to non-blocking mode";
  EXPECT_TRUE(is_nonblocking(l.get())) << "accept switches the listener to non-blocking mode";
  // Talk both ways through the engine.
  std::string in(7, '\0');
  auto r = io::read(rt, s.get(), wbytes(in));
  EXPECT_EQ(*io::write(rt, c.get(), cbytes("request")), 7u);
  ASSERT_EQ(*r, 7u);
  EXPECT_EQ(in, "request");
  std::string back(8, '\0');
  auto r2 = io::read(rt, c.get(), wbytes(back));
  EXPECT_EQ(*io::write(rt, s.get(), cbytes("response")), 8u);
  ASSERT_EQ(*r2, 8u);
  EXPECT_EQ(back, "response");
}

TEST(StreamIo, ManyAcceptsPendingOnOneListener) {
  watchdog dog("StreamIo.ManyAcceptsPendingOnOneListener", 60s);
  heddle::runtime rt(2);
  sockaddr_in addr{};
  unique_fd l = make_listener(&addr);
  const int n = 20;
  std::vector<heddle::future<int>> accepts;
  for (int i = 0; i < n; ++i) accepts.push_back(io::accept(rt, l.get()));
  std::vector<unique_fd> clients;
  for (int i = 0; i < n; ++i) {
    clients.emplace_back(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
    check_sys(::connect(clients.back().get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), "connect");
    // Mark each connection: its first byte says which client it is.
    plain_write_all(clients.back().get(), std::string(1, static_cast<char>(i)));
  }
  std::vector<unique_fd> servers;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(outcome_text(accepts[i]), "ok") << "accept " << i;
    servers.emplace_back(*accepts[i]);
    std::string b = plain_read_exact(servers.back().get(), 1);
    // The connections were made one after the other, so the kernel queues them in that order,
    // and accepts complete in their start order: the i-th accept has the i-th client.
    EXPECT_EQ(static_cast<unsigned char>(b[0]), i) << "accept " << i << " got another client";
  }
}

TEST(StreamIo, ConnectOverAUnixSocket) {
  watchdog dog("StreamIo.ConnectOverAUnixSocket", 60s);
  heddle::runtime rt(2);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string name = "heddle-stream-io-test-" + std::to_string(::getpid());
  std::memcpy(a.sun_path + 1, name.data(), name.size());  // abstract namespace: no file to clean up
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  unique_fd l(check_sys(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  check_sys(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), len), "bind");
  check_sys(::listen(l.get(), 16), "listen");
  unique_fd c(check_sys(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  auto acc = io::accept(rt, l.get());
  auto con = io::connect(rt, c.get(), reinterpret_cast<const sockaddr*>(&a), len);
  EXPECT_EQ(outcome_text(con), "ok");
  ASSERT_EQ(outcome_text(acc), "ok");
  unique_fd s(*acc);
  EXPECT_EQ(*io::write(rt, c.get(), cbytes("unix")), 4u);
  EXPECT_EQ(plain_read_exact(s.get(), 4), "unix");
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(StreamIo, ReadAtEndOfStream) {
  watchdog dog("StreamIo.ReadAtEndOfStream", 60s);
  heddle::runtime rt(2);
  std::string buf(16, '\0');
  {
    SCOPED_TRACE("pipe, writer already closed");
    auto p = make_pipe();
    p.b.reset();
    auto r = io::read(rt, p.a.get(), wbytes(buf));
    EXPECT_EQ(outcome_text(r), "end_of_file");
  }
  {
    SCOPED_TRACE("pipe, writer closes while the read waits");
    auto p = make_pipe();
    auto r = io::read(rt, p.a.get(), wbytes(buf));
    EXPECT_FALSE(r.is_ready());
    p.b.reset();
    EXPECT_EQ(outcome_text(r), "end_of_file");
  }
  {
    SCOPED_TRACE("socketpair, data then the end");
    auto s = make_socketpair();
    plain_write_all(s.b.get(), "abc");
    s.b.reset();
    auto r = io::read(rt, s.a.get(), wbytes(buf));
    ASSERT_EQ(outcome_text(r), "ok");
    EXPECT_EQ(*r, 3u);
    EXPECT_EQ(buf.substr(0, 3), "abc");
    auto r2 = io::read(rt, s.a.get(), wbytes(buf));
    EXPECT_EQ(outcome_text(r2), "end_of_file");
    auto r3 = io::read(rt, s.a.get(), wbytes(buf));  // and it stays at the end
    EXPECT_EQ(outcome_text(r3), "end_of_file");
  }
  {
    SCOPED_TRACE("TCP, peer shuts down its sending side while the read waits");
    auto t = make_tcp_pair();
    auto r = io::read(rt, t.a.get(), wbytes(buf));
    EXPECT_FALSE(r.is_ready());
    ::shutdown(t.b.get(), SHUT_WR);
    EXPECT_EQ(outcome_text(r), "end_of_file");
  }
  {
    SCOPED_TRACE("TCP, peer closes");
    auto t = make_tcp_pair();
    t.b.reset();
    auto r = io::read(rt, t.a.get(), wbytes(buf));
    EXPECT_EQ(outcome_text(r), "end_of_file");
  }
  // The error is io::errc::end_of_file in heddle's category, and says so.
  auto p = make_pipe();
  p.b.reset();
  auto r = io::read(rt, p.a.get(), wbytes(buf));
  try {
    r.get();
    ADD_FAILURE() << "no error at the end of the pipe";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), io::errc::end_of_file);
    EXPECT_EQ(&e.code().category(), &io::category());
    EXPECT_FALSE(e.code().message().empty());
  }
}

TEST(StreamIo, ConnectionResetByPeer) {
  watchdog dog("StreamIo.ConnectionResetByPeer", 60s);
  heddle::runtime rt(2);
  std::string buf(16, '\0');
  {
    SCOPED_TRACE("reset while the read waits");
    auto t = make_tcp_pair();
    auto r = io::read(rt, t.a.get(), wbytes(buf));
    EXPECT_FALSE(r.is_ready());
    close_with_reset(t.b);
    EXPECT_EQ(outcome_text(r), "ECONNRESET");
  }
  {
    SCOPED_TRACE("reset before the read");
    auto t = make_tcp_pair();
    close_with_reset(t.b);
    wait_fd(t.a.get(), POLLIN);  // the RST has arrived
    auto r = io::read(rt, t.a.get(), wbytes(buf));
    EXPECT_EQ(outcome_text(r), "ECONNRESET");
  }
}

TEST(StreamIo, BadDescriptors) {
  watchdog dog("StreamIo.BadDescriptors", 60s);
  heddle::runtime rt(2);
  std::string buf(16, '\0');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(9);
  for (int fd : {heddle_test::not_open_fd(), -1}) {
    SCOPED_TRACE("fd " + std::to_string(fd));
    auto r = io::read(rt, fd, wbytes(buf));
    EXPECT_EQ(outcome_text(r), "EBADF");
    auto w = io::write(rt, fd, cbytes("x"));
    EXPECT_EQ(outcome_text(w), "EBADF");
    auto a = io::accept(rt, fd);
    EXPECT_EQ(outcome_text(a), "EBADF");
    auto c = io::connect(rt, fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    EXPECT_EQ(outcome_text(c), "EBADF");
  }
  {
    SCOPED_TRACE("a descriptor closed after use");
    auto p = make_pipe();
    plain_write_all(p.b.get(), "a");
    std::string one(1, '\0');
    EXPECT_EQ(*io::read(rt, p.a.get(), wbytes(one)), 1u);  // known to the engine now
    const int fd = p.a.get();
    p.a.reset();
    auto r = io::read(rt, fd, wbytes(buf));
    EXPECT_EQ(outcome_text(r), "EBADF");
  }
  {
    SCOPED_TRACE("the wrong direction");
    auto p = make_pipe();
    auto r = io::read(rt, p.b.get(), wbytes(buf));  // the write end of a pipe is not readable
    EXPECT_EQ(outcome_text(r), "EBADF");
    auto w = io::write(rt, p.a.get(), cbytes("x"));
    EXPECT_EQ(outcome_text(w), "EBADF");
  }
  {
    SCOPED_TRACE("accept on what is not a listening socket");
    auto p = make_pipe();
    auto a = io::accept(rt, p.a.get());
    EXPECT_EQ(outcome_text(a), "ENOTSOCK");
    unique_fd s(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
    auto a2 = io::accept(rt, s.get());
    EXPECT_EQ(outcome_text(a2), "EINVAL");
  }
}

TEST(StreamIo, WriteToAClosedPeerGivesEpipeWithoutSigpipe) {
  watchdog dog("StreamIo.WriteToAClosedPeerGivesEpipeWithoutSigpipe", 60s);
  heddle::runtime rt(2);
  sigpipe_counter sigpipes;
  {
    SCOPED_TRACE("socketpair, peer closed");
    auto s = make_socketpair();
    s.b.reset();
    auto w = io::write(rt, s.a.get(), cbytes("to nobody"));
    EXPECT_EQ(outcome_text(w), "EPIPE");
  }
  {
    SCOPED_TRACE("TCP, own sending side shut down");
    auto t = make_tcp_pair();
    ::shutdown(t.a.get(), SHUT_WR);
    auto w = io::write(rt, t.a.get(), cbytes("after shutdown"));
    EXPECT_EQ(outcome_text(w), "EPIPE");
  }
  {
    SCOPED_TRACE("socketpair, peer closes while the write waits for space");
    auto s = make_socketpair();
    small_buffers(s.a.get());
    fill_socket(s.a.get());
    std::string msg(4096, 'w');
    auto w = io::write(rt, s.a.get(), cbytes(msg));
    EXPECT_FALSE(w.is_ready());
    s.b.reset();
    EXPECT_EQ(outcome_text(w), "EPIPE");
  }
  EXPECT_EQ(sigpipes.count(), 0) << "a write to a closed socket raised SIGPIPE";
}

TEST(StreamIo, WriteToAClosedPipeGivesEpipeWithoutSigpipe) {
  watchdog dog("StreamIo.WriteToAClosedPipeGivesEpipeWithoutSigpipe", 60s);
  heddle::runtime rt(2);
  sigpipe_counter sigpipes;
  {
    SCOPED_TRACE("reader already closed");
    auto p = make_pipe();
    p.a.reset();
    auto w = io::write(rt, p.b.get(), cbytes("to nobody"));
    EXPECT_EQ(outcome_text(w), "EPIPE");
  }
  {
    SCOPED_TRACE("reader closes while the write waits for space");
    auto p = make_pipe();
    ::fcntl(p.b.get(), F_SETPIPE_SZ, 4096);
    std::string fill(4096, 'f');
    auto w0 = io::write(rt, p.b.get(), cbytes(fill));
    EXPECT_EQ(*w0, fill.size());
    auto w = io::write(rt, p.b.get(), cbytes("more"));
    EXPECT_FALSE(w.is_ready());
    p.a.reset();
    EXPECT_EQ(outcome_text(w), "EPIPE");
  }
  // Let a signal that was raised on another thread arrive before counting.
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(sigpipes.count(), 0) << "a write to a closed pipe raised SIGPIPE";
}

TEST(StreamIo, ConnectToAClosedPortIsRefused) {
  watchdog dog("StreamIo.ConnectToAClosedPortIsRefused", 60s);
  heddle::runtime rt(2);
  // A bound socket that does not listen: its port is ours and refuses connections.
  unique_fd holder(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check_sys(::bind(holder.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), "bind");
  socklen_t len = sizeof a;
  check_sys(::getsockname(holder.get(), reinterpret_cast<sockaddr*>(&a), &len), "getsockname");
  for (int i = 0; i < 5; ++i) {
    unique_fd c(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
    auto con = io::connect(rt, c.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a);
    EXPECT_EQ(outcome_text(con), "ECONNREFUSED");
  }
}

// ---------------------------------------------------------------------------------------------
// Cancellation.

TEST(StreamIo, CancelAPendingReadThenUseTheDescriptor) {
  watchdog dog("StreamIo.CancelAPendingReadThenUseTheDescriptor", 60s);
  heddle::runtime rt(2);
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "socketpair" : "pipe");
    fd_pair p = kind == 0 ? make_socketpair() : make_pipe();
    for (int round = 0; round < 10; ++round) {
      heddle::cancellation_source src;
      std::string buf(16, '\0');
      auto r = io::read(rt, p.a.get(), wbytes(buf), src.token());
      EXPECT_FALSE(r.is_ready());
      src.cancel();
      EXPECT_EQ(outcome_text(r), "operation_cancelled");
      // Still usable, and the cancelled read took nothing.
      plain_write_all(p.b.get(), "after " + std::to_string(round));
      std::string got(32, '\0');
      auto r2 = io::read(rt, p.a.get(), wbytes(got));
      const std::string want = "after " + std::to_string(round);
      ASSERT_EQ(*r2, want.size());
      EXPECT_EQ(got.substr(0, want.size()), want);
    }
  }
}

TEST(StreamIo, CancelRacingWithDataLosesNothing) {
  watchdog dog("StreamIo.CancelRacingWithDataLosesNothing", 120s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  const int rounds = scaled(500, 100);
  std::string received;
  int cancelled = 0;
  for (int i = 0; i < rounds; ++i) {
    heddle::cancellation_source src;
    char c = 0;
    auto r = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&c, 1)), src.token());
    const char byte = static_cast<char>(i % 251);
    std::thread writer([&] { plain_write_all(s.b.get(), std::string_view(&byte, 1)); });
    if (i % 2) std::this_thread::yield();
    src.cancel();
    writer.join();
    const std::string o = outcome_text(r);
    if (o == "ok") {
      ASSERT_EQ(*r, 1u);
      received.push_back(c);
    } else {
      ASSERT_EQ(o, "operation_cancelled");
      ++cancelled;
      // The byte is still there for the next read.
      char d = 0;
      auto r2 = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&d, 1)));
      ASSERT_EQ(*r2, 1u);
      received.push_back(d);
    }
  }
  ASSERT_EQ(received.size(), static_cast<std::size_t>(rounds));
  for (int i = 0; i < rounds; ++i) ASSERT_EQ(received[i], static_cast<char>(i % 251)) << "at byte " << i;
  EXPECT_FALSE(readable_now(s.a.get()));
  RecordProperty("cancelled_rounds", cancelled);
}

TEST(StreamIo, CancelAPendingAcceptThenAccept) {
  watchdog dog("StreamIo.CancelAPendingAcceptThenAccept", 60s);
  heddle::runtime rt(2);
  sockaddr_in addr{};
  unique_fd l = make_listener(&addr);
  heddle::cancellation_source src;
  auto a = io::accept(rt, l.get(), src.token());
  EXPECT_FALSE(a.is_ready());
  src.cancel();
  EXPECT_EQ(outcome_text(a), "operation_cancelled");
  unique_fd c(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  check_sys(::connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), "connect");
  auto a2 = io::accept(rt, l.get());
  ASSERT_EQ(outcome_text(a2), "ok");
  unique_fd s(*a2);
  plain_write_all(c.get(), "hi");
  EXPECT_EQ(plain_read_exact(s.get(), 2), "hi");
}

TEST(StreamIo, CancelAPendingWriteThenWrite) {
  watchdog dog("StreamIo.CancelAPendingWriteThenWrite", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  small_buffers(s.a.get());
  small_buffers(s.b.get());
  const std::size_t filled = fill_socket(s.a.get());
  heddle::cancellation_source src;
  std::string msg(2000, 'c');
  auto w = io::write(rt, s.a.get(), cbytes(msg), src.token());
  EXPECT_FALSE(w.is_ready());
  src.cancel();
  EXPECT_EQ(outcome_text(w), "operation_cancelled");
  // The cancelled write wrote nothing; the socket still works.
  EXPECT_EQ(plain_read_exact(s.b.get(), filled), std::string(filled, 'f'));
  auto w2 = io::write(rt, s.a.get(), cbytes("fresh"));
  EXPECT_EQ(*w2, 5u);
  EXPECT_EQ(plain_read_exact(s.b.get(), 5), "fresh");
  EXPECT_FALSE(readable_now(s.b.get()));
}

TEST(StreamIo, CancelOneOfSeveralPendingReads) {
  watchdog dog("StreamIo.CancelOneOfSeveralPendingReads", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  heddle::cancellation_source src;
  char b0 = 0, b1 = 0, b2 = 0;
  auto r0 = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&b0, 1)));
  auto r1 = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&b1, 1)), src.token());
  auto r2 = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&b2, 1)));
  src.cancel();
  EXPECT_EQ(outcome_text(r1), "operation_cancelled");
  EXPECT_FALSE(r0.is_ready());
  EXPECT_FALSE(r2.is_ready());
  plain_write_all(s.b.get(), "xy");
  ASSERT_EQ(*r0, 1u);
  ASSERT_EQ(*r2, 1u);
  EXPECT_EQ(b0, 'x');
  EXPECT_EQ(b2, 'y');
  EXPECT_EQ(b1, 0);
}

TEST(StreamIo, AlreadyCancelledTokenOnAWaitingRead) {
  watchdog dog("StreamIo.AlreadyCancelledTokenOnAWaitingRead", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  heddle::cancellation_source src;
  src.cancel();
  std::string buf(4, '\0');
  auto r = io::read(rt, s.a.get(), wbytes(buf), src.token());
  EXPECT_EQ(outcome_text(r), "operation_cancelled");
  plain_write_all(s.b.get(), "ok!");
  auto r2 = io::read(rt, s.a.get(), wbytes(buf));
  ASSERT_EQ(*r2, 3u);
  EXPECT_EQ(buf.substr(0, 3), "ok!");
}

TEST(StreamIo, CancelAfterCompletionChangesNothing) {
  watchdog dog("StreamIo.CancelAfterCompletionChangesNothing", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  plain_write_all(s.b.get(), "done");
  heddle::cancellation_source src;
  std::string buf(4, '\0');
  auto r = io::read(rt, s.a.get(), wbytes(buf), src.token());
  r.wait();
  src.cancel();
  EXPECT_EQ(outcome_text(r), "ok");
  EXPECT_EQ(*r, 4u);
  EXPECT_EQ(buf, "done");
}

TEST(StreamIo, OneTokenCancelsOperationsOnSeveralDescriptors) {
  watchdog dog("StreamIo.OneTokenCancelsOperationsOnSeveralDescriptors", 60s);
  heddle::runtime rt(2);
  heddle::cancellation_source src;
  std::vector<fd_pair> pairs;
  std::vector<std::string> bufs(16, std::string(4, '\0'));
  std::vector<heddle::future<std::size_t>> reads;
  for (int i = 0; i < 16; ++i) {
    pairs.push_back(i % 2 ? make_pipe() : make_socketpair());
    reads.push_back(io::read(rt, pairs.back().a.get(), wbytes(bufs[i]), src.token()));
  }
  sockaddr_in addr{};
  unique_fd l = make_listener(&addr);
  auto acc = io::accept(rt, l.get(), src.token());
  src.cancel();
  for (auto& r : reads) EXPECT_EQ(outcome_text(r), "operation_cancelled");
  EXPECT_EQ(outcome_text(acc), "operation_cancelled");
}

// ---------------------------------------------------------------------------------------------
// Order: operations on one descriptor and direction complete in the order they were started.

TEST(StreamIo, PendingReadsCompleteInStartOrder) {
  watchdog dog("StreamIo.PendingReadsCompleteInStartOrder", 60s);
  heddle::runtime rt(2);
  for (int kind = 0; kind < 2; ++kind) {
    SCOPED_TRACE(kind == 0 ? "socketpair" : "pipe");
    fd_pair p = kind == 0 ? make_socketpair() : make_pipe();
    const int n = 32;
    std::vector<std::string> bufs(n, std::string(4, '\0'));
    std::mutex m;
    std::vector<int> completion;
    std::vector<heddle::future<std::size_t>> reads;
    for (int i = 0; i < n; ++i) {
      reads.push_back(
          io::read(rt, p.a.get(), wbytes(bufs[i])).then(heddle::strategy::short_task, [&, i](std::size_t k) {
            std::lock_guard lock(m);
            completion.push_back(i);
            return k;
          }));
    }
    std::string data(4 * n, '\0');
    for (int i = 0; i < 4 * n; ++i) data[i] = static_cast<char>(' ' + i % 90);
    plain_write_all(p.b.get(), data);
    p.b.reset();  // whatever a read does not get, the end of the stream ends: no read waits forever
    std::string concat;
    bool ended = false;
    for (int i = 0; i < n; ++i) {
      const std::string o = outcome_text(reads[i]);
      if (o == "ok") {
        EXPECT_FALSE(ended) << "read " << i << " got data after an earlier read saw the end";
        concat += bufs[i].substr(0, *reads[i]);
      } else {
        EXPECT_EQ(o, "end_of_file") << "read " << i;
        ended = true;
      }
    }
    EXPECT_EQ(concat, data) << "reads took the bytes out of their start order";
    std::lock_guard lock(m);
    EXPECT_TRUE(std::is_sorted(completion.begin(), completion.end())) << "reads completed out of their start order";
  }
}

TEST(StreamIo, PendingWritesCompleteInStartOrder) {
  watchdog dog("StreamIo.PendingWritesCompleteInStartOrder", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  small_buffers(s.a.get());
  small_buffers(s.b.get());
  const std::size_t filled = fill_socket(s.a.get());
  const int n = 16;
  std::vector<std::string> msgs;
  for (int i = 0; i < n; ++i) msgs.emplace_back(1000 + 100 * i, static_cast<char>('A' + i));
  std::mutex m;
  std::vector<int> completion;
  std::vector<heddle::future<std::size_t>> writes;
  for (int i = 0; i < n; ++i) {
    writes.push_back(
        io::write(rt, s.a.get(), cbytes(msgs[i])).then(heddle::strategy::short_task, [&, i](std::size_t k) {
          std::lock_guard lock(m);
          completion.push_back(i);
          return k;
        }));
  }
  // Drain until every write has completed and nothing more arrives.
  std::string received;
  auto all_ready = [&] { return std::all_of(writes.begin(), writes.end(), [](auto& w) { return w.is_ready(); }); };
  for (;;) {
    char tmp[8192];
    ssize_t k = ::recv(s.b.get(), tmp, sizeof tmp, MSG_DONTWAIT);
    if (k > 0) {
      received.append(tmp, static_cast<std::size_t>(k));
      continue;
    }
    ASSERT_TRUE(k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    if (all_ready() && !readable_now(s.b.get())) break;
    std::this_thread::sleep_for(1ms);
  }
  std::string want(filled, 'f');
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(outcome_text(writes[i]), "ok") << "write " << i;
    ASSERT_GE(*writes[i], 1u);
    want += msgs[i].substr(0, *writes[i]);
  }
  EXPECT_EQ(received.size(), want.size());
  EXPECT_TRUE(received == want) << "the writes' bytes are not in their start order";
  std::lock_guard lock(m);
  EXPECT_TRUE(std::is_sorted(completion.begin(), completion.end())) << "writes completed out of their start order";
}

// A read and a write wait on one socket at the same time: each direction is served on its own.
TEST(StreamIo, ReadAndWriteWaitOnOneSocketTogether) {
  watchdog dog("StreamIo.ReadAndWriteWaitOnOneSocketTogether", 60s);
  heddle::runtime rt(2);
  for (int first = 0; first < 2; ++first) {
    SCOPED_TRACE(first == 0 ? "data arrives first" : "space frees first");
    auto s = make_socketpair();
    small_buffers(s.a.get());
    small_buffers(s.b.get());
    const std::size_t filled = fill_socket(s.a.get());
    std::string in(5, '\0');
    std::string out(3000, 'o');
    auto r = io::read(rt, s.a.get(), wbytes(in));
    auto w = io::write(rt, s.a.get(), cbytes(out));
    EXPECT_FALSE(r.is_ready());
    EXPECT_FALSE(w.is_ready());
    if (first == 0) {
      plain_write_all(s.b.get(), "hello");
      ASSERT_EQ(*r, 5u);
      EXPECT_EQ(in, "hello");
      EXPECT_FALSE(w.is_ready());  // the socket is still full
      EXPECT_EQ(plain_read_exact(s.b.get(), filled), std::string(filled, 'f'));
      ASSERT_EQ(outcome_text(w), "ok");
    } else {
      EXPECT_EQ(plain_read_exact(s.b.get(), filled), std::string(filled, 'f'));
      ASSERT_EQ(outcome_text(w), "ok");
      EXPECT_FALSE(r.is_ready());  // nothing was sent this way yet
      plain_write_all(s.b.get(), "world");
      ASSERT_EQ(*r, 5u);
      EXPECT_EQ(in, "world");
    }
    EXPECT_EQ(plain_read_exact(s.b.get(), *w), out.substr(0, *w));
  }
}

TEST(StreamIo, ThousandsOfReadsWaitOnOnePipe) {
  watchdog dog("StreamIo.ThousandsOfReadsWaitOnOnePipe", 60s);
  heddle::runtime rt(2);
  auto p = make_pipe();
  const int n = scaled(10000, 2000);
  std::string got(n, '\0');
  std::vector<heddle::future<std::size_t>> reads;
  for (int i = 0; i < n; ++i) reads.push_back(io::read(rt, p.a.get(), wbytes(got).subspan(i, 1)));
  std::string data(n, '\0');
  for (int i = 0; i < n; ++i) data[i] = static_cast<char>('a' + i % 26);
  plain_write_all(p.b.get(), data);
  for (int i = 0; i < n; ++i) ASSERT_EQ(*reads[i], 1u) << "read " << i;
  EXPECT_EQ(got, data);
}

// Several threads start operations on one pipe at once: every byte is read exactly once, and the
// records of each writer (atomic pipe writes of PIPE_BUF or less) arrive whole and in its order.
TEST(StreamIo, ConcurrentReadersAndWritersShareAPipe) {
  watchdog dog("StreamIo.ConcurrentReadersAndWritersShareAPipe", 120s);
  heddle::runtime rt(2);
  {
    SCOPED_TRACE("readers");
    auto p = make_pipe();
    const int threads = 4, per_thread = scaled(2000, 300);
    std::vector<std::string> got(threads);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        std::vector<char> bytes(per_thread);
        std::vector<heddle::future<std::size_t>> reads;
        for (int i = 0; i < per_thread; ++i)
          reads.push_back(io::read(rt, p.a.get(), std::as_writable_bytes(std::span(&bytes[i], 1))));
        for (int i = 0; i < per_thread; ++i) {
          if (*reads[i] == 1) got[t].push_back(bytes[i]);
        }
      });
    // Which reader gets which byte is open; together they must get the multiset that was written.
    std::string data(threads * per_thread, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 251);
    std::thread writer([&] {
      for (std::size_t off = 0; off < data.size(); off += 1000)
        plain_write_all(p.b.get(), std::string_view(data).substr(off, 1000));
    });
    writer.join();
    for (auto& t : ts) t.join();
    std::string all;
    for (auto& g : got) all += g;
    ASSERT_EQ(all.size(), data.size());
    std::sort(all.begin(), all.end());
    std::string want = data;
    std::sort(want.begin(), want.end());
    EXPECT_TRUE(all == want) << "bytes lost or read twice";
    EXPECT_FALSE(readable_now(p.a.get()));
  }
  {
    SCOPED_TRACE("writers");
    auto p = make_pipe();
    ::fcntl(p.b.get(), F_SETPIPE_SZ, 4096);  // small: writes wait for space
    const int threads = 4, per_thread = scaled(500, 100);
    constexpr std::size_t record = 64;  // <= PIPE_BUF: written whole or not at all
    std::vector<std::thread> ts;
    std::atomic<int> bad_counts{0};
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        std::vector<std::string> recs(per_thread);
        std::vector<heddle::future<std::size_t>> writes;
        for (int i = 0; i < per_thread; ++i) {
          recs[i] = std::to_string(t) + ":" + std::to_string(i) + ":";
          recs[i].resize(record, '.');
          writes.push_back(io::write(rt, p.b.get(), cbytes(recs[i])));
        }
        for (auto& w : writes)
          if (*w != record) bad_counts++;
      });
    std::string all = plain_read_exact(p.a.get(), threads * per_thread * record);
    for (auto& t : ts) t.join();
    EXPECT_EQ(bad_counts.load(), 0) << "a pipe write of 64 bytes was split";
    std::vector<int> next(threads, 0);
    for (std::size_t off = 0; off < all.size(); off += record) {
      const std::string rec = all.substr(off, record);
      const auto c1 = rec.find(':'), c2 = rec.find(':', c1 + 1);
      ASSERT_NE(c2, std::string::npos) << "a torn record at " << off;
      const int t = std::stoi(rec.substr(0, c1)), i = std::stoi(rec.substr(c1 + 1, c2 - c1 - 1));
      ASSERT_LT(t, threads);
      ASSERT_EQ(i, next[t]) << "writer " << t << "'s records out of its start order";
      ++next[t];
    }
    for (int t = 0; t < threads; ++t) EXPECT_EQ(next[t], per_thread);
  }
}

// A read started while another waits must not take data ahead of it (e.g. by trying the
// descriptor at once, before the engine serves the earlier read).
TEST(StreamIo, NewReadDoesNotOvertakeAPendingOne) {
  watchdog dog("StreamIo.NewReadDoesNotOvertakeAPendingOne", 120s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  const int rounds = scaled(300, 60);
  for (int i = 0; i < rounds; ++i) {
    char x = 0, y = 0;
    auto first = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&x, 1)));
    plain_write_all(s.b.get(), "x");
    auto second = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&y, 1)));
    plain_write_all(s.b.get(), "y");
    ASSERT_EQ(*first, 1u);
    ASSERT_EQ(*second, 1u);
    ASSERT_EQ(x, 'x') << "round " << i << ": the later read took the earlier read's byte";
    ASSERT_EQ(y, 'y') << "round " << i;
  }
}

TEST(StreamIo, DroppedFutureStillReadsInItsTurn) {
  watchdog dog("StreamIo.DroppedFutureStillReadsInItsTurn", 60s);
  heddle::runtime rt(2);
  auto s = make_socketpair();
  std::string dropped_buf(3, '\0');  // outlives the dropped read
  { auto dropped = io::read(rt, s.a.get(), wbytes(dropped_buf)); }
  char c = 0;
  auto later = io::read(rt, s.a.get(), std::as_writable_bytes(std::span(&c, 1)));
  plain_write_all(s.b.get(), "abc");
  plain_write_all(s.b.get(), "d");
  ASSERT_EQ(*later, 1u);
  EXPECT_EQ(c, 'd');
  EXPECT_EQ(dropped_buf, "abc");
}

// ---------------------------------------------------------------------------------------------
// A runtime destroyed with operations pending: they fail with task_cancelled, nothing hangs, and
// the descriptors are left open and unread.

TEST(StreamIo, RuntimeDestroyedWithOperationsPending) {
  watchdog dog("StreamIo.RuntimeDestroyedWithOperationsPending", 60s);
  auto rt = std::make_unique<heddle::runtime>(2);
  auto s = make_socketpair();
  auto p = make_pipe();
  auto full = make_socketpair();
  small_buffers(full.a.get());
  const std::size_t filled = fill_socket(full.a.get());
  sockaddr_in addr{};
  unique_fd l = make_listener(&addr);

  std::vector<std::string> bufs(8, std::string(4, '\0'));
  std::vector<heddle::future<std::size_t>> ops;
  for (int i = 0; i < 3; ++i) ops.push_back(io::read(*rt, s.a.get(), wbytes(bufs[i])));
  for (int i = 3; i < 6; ++i) ops.push_back(io::read(*rt, p.a.get(), wbytes(bufs[i])));
  std::string msg(4096, 'w');
  ops.push_back(io::write(*rt, full.a.get(), cbytes(msg)));
  auto acc = io::accept(*rt, l.get());
  auto succ_normal = io::read(*rt, s.b.get(), wbytes(bufs[6])).then(heddle::strategy::normal, [](std::size_t n) {
    return n;
  });
  auto succ_short = io::read(*rt, p.a.get(), wbytes(bufs[7])).then(heddle::strategy::short_task, [](std::size_t n) {
    return n;
  });
  for (auto& o : ops) EXPECT_FALSE(o.is_ready());

  rt.reset();

  for (std::size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(outcome_text(ops[i]), "task_cancelled") << "operation " << i;
  EXPECT_EQ(outcome_text(acc), "task_cancelled");
  EXPECT_EQ(outcome_text(succ_normal), "task_cancelled");
  EXPECT_EQ(outcome_text(succ_short), "task_cancelled");
  // The descriptors are still open and nothing was read or written behind our back.
  for (int fd : {s.a.get(), s.b.get(), p.a.get(), full.a.get(), l.get()}) EXPECT_NE(::fcntl(fd, F_GETFD), -1);
  plain_write_all(s.b.get(), "s");
  EXPECT_EQ(plain_read_exact(s.a.get(), 1), "s");
  plain_write_all(p.b.get(), "p");
  EXPECT_EQ(plain_read_exact(p.a.get(), 1), "p");
  EXPECT_EQ(plain_read_exact(full.b.get(), filled), std::string(filled, 'f'));
  EXPECT_FALSE(readable_now(full.b.get()));
  for (auto& b : bufs) EXPECT_EQ(b, std::string(4, '\0'));

  // A new runtime can use the same descriptors.
  heddle::runtime rt2(2);
  std::string buf(5, '\0');
  auto r = io::read(rt2, s.a.get(), wbytes(buf));
  plain_write_all(s.b.get(), "again");
  EXPECT_EQ(*r, 5u);
  EXPECT_EQ(buf, "again");
}

TEST(StreamIo, RuntimesCreatedAndDestroyedWithReadsPending) {
  watchdog dog("StreamIo.RuntimesCreatedAndDestroyedWithReadsPending", 120s);
  auto s = make_socketpair();
  const int rounds = scaled(30, 8);
  for (int i = 0; i < rounds; ++i) {
    std::vector<std::string> bufs(20, std::string(1, '\0'));
    std::vector<heddle::future<std::size_t>> reads;
    {
      heddle::runtime rt(2);
      for (auto& b : bufs) reads.push_back(io::read(rt, s.a.get(), wbytes(b)));
      if (i % 2) plain_write_all(s.b.get(), "0123456789");  // some complete, some are pending
    }
    int ok = 0;
    for (auto& r : reads) {
      const std::string o = outcome_text(r);
      if (o == "ok") ++ok;
      else EXPECT_EQ(o, "task_cancelled");
    }
    // Whatever was not read is still there.
    std::string rest;
    char tmp[64];
    ssize_t k;
    while ((k = ::recv(s.a.get(), tmp, sizeof tmp, MSG_DONTWAIT)) > 0) rest.append(tmp, static_cast<std::size_t>(k));
    EXPECT_EQ(static_cast<std::size_t>(ok) + rest.size(), i % 2 ? 10u : 0u);
  }
}

// Tokens cancelled on another thread while the runtime is being destroyed, data arriving at the
// same time, successors attached: every future ends as data, operation_cancelled or
// task_cancelled; nothing crashes, hangs or (under TSan) races.
TEST(StreamIo, CancelAndDataRacingWithRuntimeDestruction) {
  watchdog dog("StreamIo.CancelAndDataRacingWithRuntimeDestruction", 120s);
  const int rounds = scaled(40, 10);
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto s = make_socketpair();
    auto p = make_pipe();
    heddle::cancellation_source src;
    const int n = 32;
    std::vector<char> bytes(2 * n, 0);
    std::vector<heddle::future<std::size_t>> plain_ops;
    std::vector<heddle::future<int>> succ_ops;
    auto rt = std::make_unique<heddle::runtime>(2);
    for (int i = 0; i < n; ++i) {
      plain_ops.push_back(io::read(*rt, s.a.get(), std::as_writable_bytes(std::span(&bytes[i], 1)), src.token()));
      const heddle::strategy how = static_cast<heddle::strategy>(i % heddle::strategy_count);
      succ_ops.push_back(io::read(*rt, p.a.get(), std::as_writable_bytes(std::span(&bytes[n + i], 1)), src.token())
                             .then(how, [](std::size_t k) { return static_cast<int>(k); }));
    }
    std::atomic<bool> go{false};
    std::thread canceller([&] {
      while (!go.load()) std::this_thread::yield();
      if (round % 3 != 0) std::this_thread::yield();
      src.cancel();
    });
    std::thread feeder([&] {
      while (!go.load()) std::this_thread::yield();
      plain_write_all(s.b.get(), std::string(n / 2, 's'));
      plain_write_all(p.b.get(), std::string(n / 2, 'p'));
    });
    go = true;
    if (round % 2) std::this_thread::yield();
    rt.reset();
    canceller.join();
    feeder.join();
    for (auto& f : plain_ops) {
      const std::string o = outcome_text(f);
      EXPECT_TRUE(o == "ok" || o == "operation_cancelled" || o == "task_cancelled") << o;
      if (o == "ok") {
        EXPECT_EQ(*f, 1u);
      }
    }
    for (auto& f : succ_ops) {
      const std::string o = outcome_text(f);
      EXPECT_TRUE(o == "ok" || o == "operation_cancelled" || o == "task_cancelled") << o;
      if (o == "ok") {
        EXPECT_EQ(*f, 1);
      }
    }
  }
}

}  // namespace

}  // namespace stream_io_test
