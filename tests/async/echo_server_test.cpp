// SPDX-License-Identifier: Apache-2.0
// An echo server on loopback TCP built from fd operations only: io::accept in a continuation
// chain, and per connection a chain of io::read -> io::write (-> io::write ... for the rest of a
// partial write) -> io::read continuations, on a runtime with 2 workers. 1,000 connections are
// open at once and every echo is checked byte for byte over several round trips of varied sizes,
// some far larger than the socket buffers (so the server's writes go partial).
//
// That no worker ever blocks in a system call is shown three ways: connections that stay silent
// keep server reads pending the whole time (a runtime that waited for them in read(2) would have
// both workers stuck and never finish), heartbeat tasks on the same two workers complete while
// those reads wait, and a sampler watches the workers' /proc/self/task/<tid>/{stat,syscall}: a
// worker seen twice in a row asleep in the same I/O system call counts as blocked.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "async_test_support.hpp"

namespace echo_server_test {
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
// Helpers.

unique_fd make_listener(sockaddr_in* addr) {
  unique_fd l(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  int one = 1;
  ::setsockopt(l.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  check_sys(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), "bind");
  check_sys(::listen(l.get(), 4096), "listen");
  socklen_t len = sizeof a;
  check_sys(::getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len), "getsockname");
  *addr = a;
  return l;
}

bool is_nonblocking(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_NONBLOCK) != 0;
}

// 1,000 connections take 2,000 descriptors in this process; make sure the soft limit allows it.
void ensure_fd_limit(rlim_t want) {
  rlimit rl{};
  check_sys(::getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
  if (rl.rlim_cur >= want) return;
  if (rl.rlim_max < want) rl.rlim_max = want;  // root may raise the hard limit too
  rl.rlim_cur = want;
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    check_sys(::getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
    rl.rlim_cur = rl.rlim_max;
    check_sys(::setrlimit(RLIMIT_NOFILE, &rl), "setrlimit");
  }
}

// The bytes of message (connection, round): reproducible from the pair alone.
std::size_t message_size(int conn, int round) {
  const std::uint64_t h = heddle_test::mix(static_cast<std::uint64_t>(conn) * 1000003u +
                                           static_cast<std::uint64_t>(round));
  if (conn % 25 == 0 && round == 1) return (512u << 10) + h % (512u << 10);  // far beyond the socket buffers
  switch (h % 10) {
    // Formatted by hand: a table, one row a line.
    // clang-format off
    case 0: case 1: case 2: case 3: case 4: case 5: return 1 + h % 200;
    case 6: case 7: case 8: return 1024 + h % 16384;
    default: return 32768 + h % 65536;
      // clang-format on
  }
}

void fill_message(int conn, int round, std::vector<char>& msg) {
  msg.resize(message_size(conn, round));
  const std::uint64_t seed = heddle_test::mix(static_cast<std::uint64_t>(conn) << 20 |
                                              static_cast<std::uint64_t>(round));
  for (std::size_t i = 0; i < msg.size(); i += 8) {
    std::uint64_t w = heddle_test::mix(seed + i);
    for (std::size_t j = i; j < std::min(msg.size(), i + 8); ++j, w >>= 8) msg[j] = static_cast<char>(w & 0xff);
  }
}

// ---------------------------------------------------------------------------------------------
// Watching the workers: which threads they are, and whether one sleeps in an I/O system call.

std::vector<pid_t> worker_tids(heddle::runtime& rt) {
  const unsigned n = rt.num_threads();
  std::mutex m;
  std::set<pid_t> tids;
  std::atomic<unsigned> arrived{0};
  std::vector<heddle::future<void>> fs;
  // One task per worker, each held until all have started: so each runs on a different worker.
  for (unsigned i = 0; i < n; ++i)
    fs.push_back(rt.task([&] {
      {
        std::lock_guard lock(m);
        tids.insert(::gettid());
      }
      arrived++;
      while (arrived.load() < n) std::this_thread::yield();
    }));
  for (auto& f : fs) f.get();
  return {tids.begin(), tids.end()};
}

bool is_io_syscall(long nr) {
  static const std::set<long> io_calls = {
      SYS_read,           SYS_write,   SYS_readv,   SYS_writev,   SYS_pread64,  SYS_pwrite64, SYS_recvfrom,
      SYS_sendto,         SYS_recvmsg, SYS_sendmsg, SYS_accept4,  SYS_connect,  SYS_ppoll,    SYS_pselect6,
      SYS_epoll_pwait,    SYS_waitid,  SYS_wait4,   SYS_recvmmsg, SYS_sendmmsg,
#ifdef SYS_accept
      SYS_accept,
#endif
#ifdef SYS_poll
      SYS_poll,
#endif
#ifdef SYS_select
      SYS_select,
#endif
#ifdef SYS_epoll_wait
      SYS_epoll_wait,
#endif
#ifdef SYS_epoll_pwait2
      SYS_epoll_pwait2,
#endif
#ifdef SYS_io_uring_enter
      SYS_io_uring_enter,
#endif
  };
  return io_calls.count(nr) != 0;
}

struct thread_probe {
  bool ok = false;
  char state = '?';
  long syscall_nr = -1;  // -1: running, or not in a system call
  std::string syscall_line;
};

thread_probe probe(pid_t tid) {
  thread_probe p;
  const std::string dir = "/proc/self/task/" + std::to_string(tid) + "/";
  std::ifstream stat(dir + "stat");
  std::string s;
  if (!std::getline(stat, s)) return p;
  const auto close_paren = s.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= s.size()) return p;
  p.state = s[close_paren + 2];
  std::ifstream sc(dir + "syscall");
  if (!std::getline(sc, p.syscall_line)) return p;
  if (p.syscall_line.rfind("running", 0) != 0) p.syscall_nr = std::strtol(p.syscall_line.c_str(), nullptr, 10);
  p.ok = true;
  return p;
}

// Samples the given threads every millisecond on its own thread. A thread counts as blocked in
// an I/O system call when two samples in a row find it asleep (state S) in the same call with the
// same arguments: a call on a non-blocking descriptor never sleeps like that, one waiting for data
// does.
class blocked_io_sampler {
 public:
  explicit blocked_io_sampler(std::vector<pid_t> tids) : tids_(std::move(tids)) {
    thread_ = std::thread([this] { run(); });
  }
  ~blocked_io_sampler() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Whether /proc gave what the sampler needs (it may not, in some containers).
  bool works() const { return unreadable_ == 0 && samples_ > 0; }
  long samples() const { return samples_; }
  long blocked() const { return blocked_; }
  std::string first_blocked() const {
    std::lock_guard lock(m_);
    return first_;
  }
  // One probe round now, on the calling thread (for tests that drive the sampling themselves).
  void sample_once() { sample(); }

 private:
  void run() {
    while (!stop_.load()) {
      sample();
      std::this_thread::sleep_for(1ms);
    }
  }
  void sample() {
    std::lock_guard lock(m_);
    prev_.resize(tids_.size());
    for (std::size_t i = 0; i < tids_.size(); ++i) {
      thread_probe p = probe(tids_[i]);
      if (!p.ok) {
        ++unreadable_;
        continue;
      }
      ++samples_;
      const thread_probe& q = prev_[i];
      if (q.ok && p.state == 'S' && q.state == 'S' && is_io_syscall(p.syscall_nr) && p.syscall_line == q.syscall_line) {
        if (blocked_++ == 0) first_ = "thread " + std::to_string(tids_[i]) + " asleep in system call " + p.syscall_line;
      }
      prev_[i] = std::move(p);
    }
  }

  std::vector<pid_t> tids_;
  mutable std::mutex m_;
  std::vector<thread_probe> prev_;
  std::atomic<bool> stop_{false};
  std::atomic<long> samples_{0}, blocked_{0}, unreadable_{0};
  std::string first_;
  std::thread thread_;
};

// Heartbeats: tasks on the runtime's workers, submitted and awaited from a plain thread.
int heartbeats(heddle::runtime& rt, int n) {
  int done = 0;
  for (int i = 0; i < n; ++i) done += rt.task([i] { return i; }).get() == i;
  return done;
}

// ---------------------------------------------------------------------------------------------
// The server: accept chain, and per connection a read -> write... chain.

struct echo_server {
  heddle::runtime* rt = nullptr;
  heddle::strategy how = heddle::strategy::normal;  // how every successor of the server starts
  int listen_fd = -1;
  int expected = 0;  // connections to accept, then the accept chain finishes
  chain acceptor;
  std::atomic<int> accepted{0};
  std::atomic<std::size_t> partial_writes{0}, bytes_echoed{0}, reads{0};
  std::atomic<int> blocking_fds{0};

  struct connection {
    echo_server* srv;
    int fd;
    std::vector<std::byte> buf;
    chain ch;

    void read_next() {
      ch.step([&] {
        return io::read(*srv->rt, fd, buf).then(srv->how, [this](std::size_t n) {
          srv->reads++;
          write_from(0, n);
        });
      });
    }
    void write_from(std::size_t off, std::size_t n) {
      if (off == n) {
        srv->bytes_echoed += n;
        return read_next();
      }
      ch.step([&] {
        return io::write(*srv->rt, fd, std::span<const std::byte>(buf).subspan(off, n - off))
            .then(srv->how, [this, off, n](std::size_t k) {
              if (k == 0 || k > n - off) throw std::runtime_error("write returned " + std::to_string(k));
              if (k < n - off) srv->partial_writes++;
              write_from(off + k, n);
            });
      });
    }
  };
  std::mutex m;
  std::vector<std::unique_ptr<connection>> conns;

  void accept_next() {
    if (accepted.load() == expected) return acceptor.finish();
    acceptor.step([&] {
      return io::accept(*rt, listen_fd).then(how, [this](int fd) {
        on_accept(fd);
        accept_next();
      });
    });
  }
  void on_accept(int fd) {
    if (!is_nonblocking(fd)) blocking_fds++;
    // Small send buffers: the echo of a big read goes out in several partial writes.
    int sz = 8192;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    const int n = accepted.load();
    auto c = std::make_unique<connection>();
    c->srv = this;
    c->fd = fd;
    c->buf.resize(n % 3 == 0 ? 65536 : n % 3 == 1 ? 4096 : 700);  // varied read sizes
    connection* raw = c.get();
    {
      std::lock_guard lock(m);
      conns.push_back(std::move(c));
    }
    accepted++;
    raw->read_next();
  }
  std::vector<connection*> connections() {
    std::lock_guard lock(m);
    std::vector<connection*> v;
    for (auto& c : conns) v.push_back(c.get());
    return v;
  }
};

// ---------------------------------------------------------------------------------------------
// Clients on plain threads with poll(2): independent of the code under test.

struct client_conn {
  int id;
  unique_fd fd;
  int round = 0;
  std::vector<char> msg;
  std::size_t sent = 0, got = 0;
  bool done = false;
};

struct client_stats {
  std::mutex m;
  std::vector<std::string> failures;
  std::atomic<std::size_t> bytes_sent{0}, round_trips{0};
  void fail(std::string s) {
    std::lock_guard lock(m);
    if (failures.size() < 20) failures.push_back(std::move(s));
  }
};

void run_clients(std::vector<client_conn*> conns, int rounds, client_stats& stats, std::atomic<bool>& abort) {
  std::vector<char> in(1 << 16);
  std::size_t left = conns.size();
  std::vector<pollfd> pfds;
  std::vector<client_conn*> which;
  for (client_conn* c : conns) fill_message(c->id, 0, c->msg);
  while (left > 0 && !abort.load()) {
    pfds.clear();
    which.clear();
    for (client_conn* c : conns)
      if (!c->done) {
        pfds.push_back({c->fd.get(), static_cast<short>(POLLIN | (c->sent < c->msg.size() ? POLLOUT : 0)), 0});
        which.push_back(c);
      }
    int r = ::poll(pfds.data(), pfds.size(), 100);
    if (r < 0 && errno != EINTR) {
      stats.fail(std::string("poll: ") + std::strerror(errno));
      abort = true;
      return;
    }
    for (std::size_t i = 0; i < pfds.size(); ++i) {
      client_conn* c = which[i];
      const short ev = pfds[i].revents;
      if (!ev) continue;
      if ((ev & POLLOUT) && c->sent < c->msg.size()) {
        ssize_t n = ::send(c->fd.get(), c->msg.data() + c->sent, c->msg.size() - c->sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
          c->sent += static_cast<std::size_t>(n);
          stats.bytes_sent += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          stats.fail("client " + std::to_string(c->id) + " send: " + std::strerror(errno));
          abort = true;
          return;
        }
      }
      if (ev & (POLLIN | POLLERR | POLLHUP)) {
        ssize_t n = ::recv(c->fd.get(), in.data(), in.size(), MSG_DONTWAIT);
        if (n == 0) {
          stats.fail("client " + std::to_string(c->id) + ": the server closed the connection in round " +
                     std::to_string(c->round));
          abort = true;
          return;
        }
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) continue;
          stats.fail("client " + std::to_string(c->id) + " recv: " + std::strerror(errno));
          abort = true;
          return;
        }
        const std::size_t k = static_cast<std::size_t>(n);
        if (c->got + k > c->sent) {
          stats.fail("client " + std::to_string(c->id) + ": more bytes echoed than sent in round " +
                     std::to_string(c->round));
          abort = true;
          return;
        }
        if (std::memcmp(in.data(), c->msg.data() + c->got, k) != 0) {
          stats.fail("client " + std::to_string(c->id) + ": echo differs in round " + std::to_string(c->round) +
                     " at bytes " + std::to_string(c->got) + ".." + std::to_string(c->got + k));
          abort = true;
          return;
        }
        c->got += k;
        if (c->got == c->msg.size()) {
          stats.round_trips++;
          if (++c->round == rounds) {
            c->done = true;
            c->fd.reset();  // the server's next read sees the end of the stream
            --left;
          } else {
            fill_message(c->id, c->round, c->msg);
            c->sent = c->got = 0;
          }
        }
      }
    }
  }
}

unique_fd connect_blocking(const sockaddr_in& addr, int rcvbuf = 0) {
  unique_fd c(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  if (rcvbuf) ::setsockopt(c.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  check_sys(::connect(c.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), "connect");
  return c;
}

TEST(EchoServer, ThousandConnectionsOnTwoWorkers) {
  const int n = scaled(1000, 200);
  const int silent = 8;  // > the number of workers
  const int rounds = scaled(4, 3);
  const int client_threads = 4;
  ensure_fd_limit(static_cast<rlim_t>(2 * (n + silent) + 256));
  watchdog dog("EchoServer.ThousandConnectionsOnTwoWorkers", 120s);

  auto srv = std::make_unique<echo_server>();  // outlives the runtime: its chains point into it
  auto rt = std::make_unique<heddle::runtime>(2);
  sockaddr_in addr{};
  unique_fd listener = make_listener(&addr);
  srv->rt = rt.get();
  srv->listen_fd = listener.get();
  srv->expected = n + silent;

  blocked_io_sampler sampler(worker_tids(*rt));
  srv->accept_next();

  // The silent connections first: the server's reads on them wait until the very end.
  std::vector<unique_fd> quiet;
  for (int i = 0; i < silent; ++i) quiet.push_back(connect_blocking(addr));

  // All clients connect before any sends, so that all connections are open at once.
  std::vector<client_conn> clients(n);
  {
    std::vector<std::thread> ts;
    for (int t = 0; t < client_threads; ++t)
      ts.emplace_back([&, t] {
        for (int i = t; i < n; i += client_threads) {
          clients[i].id = i;
          // The big messages go to receivers with small buffers: the server's writes must go partial.
          clients[i].fd = connect_blocking(addr, i % 25 == 0 ? 4096 : 0);
        }
      });
    for (auto& t : ts) t.join();
  }
  ASSERT_EQ(srv->acceptor.join(), "finished");
  ASSERT_EQ(srv->accepted.load(), n + silent);
  EXPECT_EQ(srv->blocking_fds.load(), 0) << "accepted sockets must be non-blocking";
  EXPECT_TRUE(is_nonblocking(listener.get()));

  // Every connection has a read pending now; the workers still run other tasks.
  EXPECT_EQ(heartbeats(*rt, 50), 50);

  // The traffic, with a heartbeat thread pinging the workers throughout.
  client_stats stats;
  std::atomic<bool> abort{false}, traffic_done{false};
  std::atomic<int> beats_during_traffic{0};
  std::thread pinger([&] {
    while (!traffic_done.load()) {
      if (heartbeats(*rt, 1) == 1) beats_during_traffic++;
      std::this_thread::sleep_for(1ms);
    }
  });
  {
    std::vector<std::thread> ts;
    for (int t = 0; t < client_threads; ++t) {
      std::vector<client_conn*> mine;
      for (int i = t; i < n; i += client_threads) mine.push_back(&clients[i]);
      ts.emplace_back([&, mine] { run_clients(mine, rounds, stats, abort); });
    }
    for (auto& t : ts) t.join();
  }
  traffic_done = true;
  pinger.join();
  {
    std::lock_guard lock(stats.m);
    for (auto& f : stats.failures) ADD_FAILURE() << f;
    if (!stats.failures.empty()) return;  // the runtime's destruction cancels the server's reads
  }
  EXPECT_EQ(stats.round_trips.load(), static_cast<std::size_t>(n) * rounds);

  // The silent connections' reads waited all along; the workers are still free.
  EXPECT_EQ(heartbeats(*rt, 50), 50);
  for (int i = 0; i < silent; ++i) {
    const std::string m = "quiet " + std::to_string(i);
    ASSERT_EQ(::send(quiet[i].get(), m.data(), m.size(), MSG_NOSIGNAL), static_cast<ssize_t>(m.size()));
    std::string back(m.size(), '\0');
    ASSERT_EQ(::recv(quiet[i].get(), back.data(), back.size(), MSG_WAITALL), static_cast<ssize_t>(m.size()));
    EXPECT_EQ(back, m);
    quiet[i].reset();
  }

  // Every server chain ends with the client's end of stream.
  int ended = 0;
  for (auto* c : srv->connections()) {
    const std::string o = c->ch.join();
    EXPECT_EQ(o, "end_of_file") << "server connection on fd " << c->fd;
    ended += o == "end_of_file";
    ::close(c->fd);
  }
  EXPECT_EQ(ended, n + silent);
  sampler.stop();

  std::size_t quiet_bytes = 0;
  for (int i = 0; i < silent; ++i) quiet_bytes += ("quiet " + std::to_string(i)).size();
  EXPECT_EQ(srv->bytes_echoed.load(), stats.bytes_sent.load() + quiet_bytes);
  EXPECT_GT(srv->partial_writes.load(), 0u) << "no partial write: the big echoes should not fit";
  if (sampler.works()) {
    EXPECT_EQ(sampler.blocked(), 0) << sampler.first_blocked();
  }
  RecordProperty("partial_writes", static_cast<int>(srv->partial_writes.load()));
  RecordProperty("server_reads", static_cast<int>(srv->reads.load()));
  RecordProperty("bytes_echoed", std::to_string(srv->bytes_echoed.load()));
  RecordProperty("heartbeats_during_traffic", beats_during_traffic.load());
  RecordProperty("worker_samples", static_cast<int>(sampler.samples()));
  rt.reset();
}

// The same server with its successors started by each strategy: short_task runs them on the fd
// engine's thread (which then starts the next operations itself), asap races the workers with the
// auxiliary pool.
TEST(EchoServer, ServerSuccessorsWithEveryStrategy) {
  const int n = scaled(100, 30);
  const int rounds = 3;
  ensure_fd_limit(static_cast<rlim_t>(2 * n + 256));
  watchdog dog("EchoServer.ServerSuccessorsWithEveryStrategy", 120s);
  for (heddle::strategy how :
       {heddle::strategy::normal, heddle::strategy::express, heddle::strategy::short_task, heddle::strategy::asap}) {
    SCOPED_TRACE(heddle::to_string(how));
    auto srv = std::make_unique<echo_server>();
    auto rt = std::make_unique<heddle::runtime>(2);
    sockaddr_in addr{};
    unique_fd listener = make_listener(&addr);
    srv->rt = rt.get();
    srv->how = how;
    srv->listen_fd = listener.get();
    srv->expected = n;
    srv->accept_next();
    std::vector<client_conn> clients(n);
    for (int i = 0; i < n; ++i) {
      clients[i].id = i;
      clients[i].fd = connect_blocking(addr, i % 25 == 0 ? 4096 : 0);
    }
    ASSERT_EQ(srv->acceptor.join(), "finished");
    client_stats stats;
    std::atomic<bool> abort{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; ++t) {
      std::vector<client_conn*> mine;
      for (int i = t; i < n; i += 2) mine.push_back(&clients[i]);
      ts.emplace_back([&, mine] { run_clients(mine, rounds, stats, abort); });
    }
    for (auto& t : ts) t.join();
    {
      std::lock_guard lock(stats.m);
      for (auto& f : stats.failures) ADD_FAILURE() << f;
      if (!stats.failures.empty()) return;
    }
    EXPECT_EQ(stats.round_trips.load(), static_cast<std::size_t>(n) * rounds);
    for (auto* c : srv->connections()) {
      EXPECT_EQ(c->ch.join(), "end_of_file");
      ::close(c->fd);
    }
    EXPECT_EQ(srv->bytes_echoed.load(), stats.bytes_sent.load());
    const auto st = rt->stats();
    EXPECT_GT(st.latency(how).count, 0u) << "the successors were not started by " << heddle::to_string(how);
    rt.reset();
  }
}

// ---------------------------------------------------------------------------------------------
// Clients as heddle chains too: io::connect, then per round a chain of writes and a chain of reads
// that checks every byte, on a second runtime.

struct heddle_client {
  heddle::runtime* rt;
  int id;
  int rounds;
  unique_fd fd;
  std::vector<std::vector<char>> msgs;  // one per round, made up front
  std::vector<char> in;
  std::size_t got = 0;
  int round = 0;
  chain writer, reader;
  std::string failure;

  void write_from(int r, std::size_t off) {
    const std::vector<char>& m = msgs[r];
    if (off == m.size()) {
      if (r == rounds - 1) writer.finish();
      return;
    }
    writer.step([&] {
      return io::write(*rt, fd.get(), std::as_bytes(std::span(m)).subspan(off))
          .then(heddle::strategy::normal, [this, r, off](std::size_t k) {
            if (k == 0) throw std::runtime_error("write returned 0");
            write_from(r, off + k);
          });
    });
  }
  void read_more() {
    const std::vector<char>& m = msgs[round];
    const std::size_t want = std::min(in.size(), m.size() - got);
    reader.step([&] {
      return io::read(*rt, fd.get(), std::as_writable_bytes(std::span(in)).first(want))
          .then(heddle::strategy::normal, [this](std::size_t k) {
            const std::vector<char>& cur = msgs[round];
            if (k == 0 || got + k > cur.size()) throw std::runtime_error("read returned " + std::to_string(k));
            if (std::memcmp(in.data(), cur.data() + got, k) != 0)
              throw std::runtime_error("client " + std::to_string(id) + ": echo differs in round " +
                                       std::to_string(round) + " at byte " + std::to_string(got));
            got += k;
            if (got == cur.size()) {
              got = 0;
              if (++round == rounds) return reader.finish();
              write_from(round, 0);  // the next round starts once this one's echo is complete
            }
            read_more();
          });
    });
  }
};

TEST(EchoServer, HeddleClientsAgainstHeddleServer) {
  const int n = scaled(200, 50);
  const int rounds = 3;
  ensure_fd_limit(static_cast<rlim_t>(2 * n + 256));
  watchdog dog("EchoServer.HeddleClientsAgainstHeddleServer", 120s);

  auto srv = std::make_unique<echo_server>();
  std::vector<std::unique_ptr<heddle_client>> clients;
  auto server_rt = std::make_unique<heddle::runtime>(2);
  auto client_rt = std::make_unique<heddle::runtime>(2);
  sockaddr_in addr{};
  unique_fd listener = make_listener(&addr);
  srv->rt = server_rt.get();
  srv->listen_fd = listener.get();
  srv->expected = n;
  srv->accept_next();

  std::vector<heddle::future<void>> connects;
  for (int i = 0; i < n; ++i) {
    auto c = std::make_unique<heddle_client>();
    c->rt = client_rt.get();
    c->id = i;
    c->rounds = rounds;
    c->fd = unique_fd(check_sys(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
    if (i % 25 == 0) {
      int sz = 4096;
      ::setsockopt(c->fd.get(), SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    }
    c->msgs.resize(rounds);
    for (int r = 0; r < rounds; ++r) fill_message(i + 7, r, c->msgs[r]);
    c->in.resize(i % 2 ? 65536 : 1500);
    connects.push_back(io::connect(*client_rt, c->fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr));
    clients.push_back(std::move(c));
  }
  for (int i = 0; i < n; ++i) ASSERT_EQ(outcome_text(connects[i]), "ok") << "connect " << i;
  ASSERT_EQ(srv->acceptor.join(), "finished");
  for (auto& c : clients) {
    EXPECT_TRUE(is_nonblocking(c->fd.get()));
    c->read_more();
    c->write_from(0, 0);
  }
  for (auto& c : clients) {
    EXPECT_EQ(c->reader.join(), "finished") << "client " << c->id;
    EXPECT_EQ(c->writer.join(), "finished") << "client " << c->id;
    c->fd.reset();
  }
  for (auto* c : srv->connections()) {
    EXPECT_EQ(c->ch.join(), "end_of_file");
    ::close(c->fd);
  }
  std::size_t total = 0;
  for (auto& c : clients)
    for (auto& m : c->msgs) total += m.size();
  EXPECT_EQ(srv->bytes_echoed.load(), total);
  client_rt.reset();
  server_rt.reset();
}

// ---------------------------------------------------------------------------------------------
// Operations that wait, started from inside worker tasks, hold no worker: the workers run other
// tasks meanwhile and are never found asleep in an I/O system call. The sampler is first shown to
// catch a thread that does block in read(2).

TEST(EchoServer, WaitingOperationsHoldNoWorker) {
  watchdog dog("EchoServer.WaitingOperationsHoldNoWorker", 60s);
  // The control: a plain thread blocked in read(2) on a blocking pipe is seen as blocked.
  {
    int p[2];
    check_sys(::pipe2(p, O_CLOEXEC), "pipe2");
    unique_fd r(p[0]), w(p[1]);
    std::atomic<pid_t> tid{0};
    std::thread blocker([&] {
      tid = ::gettid();
      char c;
      [[maybe_unused]] ssize_t k = ::read(r.get(), &c, 1);
    });
    while (tid.load() == 0) std::this_thread::yield();
    blocked_io_sampler control({tid.load()});
    std::this_thread::sleep_for(50ms);
    control.stop();
    ASSERT_EQ(::write(w.get(), "x", 1), 1);
    blocker.join();
    if (!control.works()) GTEST_SKIP() << "/proc/self/task/<tid>/syscall cannot be read here";
    ASSERT_GT(control.blocked(), 0) << "the sampler misses a thread blocked in read(2)";
  }

  heddle::runtime rt(2);
  const auto tids = worker_tids(rt);
  ASSERT_EQ(tids.size(), 2u);
  blocked_io_sampler sampler(tids);

  int sv[2];
  std::vector<unique_fd> keep;
  std::vector<int> read_fds, peer_fds;
  for (int i = 0; i < 4; ++i) {
    check_sys(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair");
    read_fds.push_back(sv[0]);
    peer_fds.push_back(sv[1]);
    keep.emplace_back(sv[0]);
    keep.emplace_back(sv[1]);
    check_sys(::pipe2(sv, O_CLOEXEC), "pipe2");
    read_fds.push_back(sv[0]);
    peer_fds.push_back(sv[1]);
    keep.emplace_back(sv[0]);
    keep.emplace_back(sv[1]);
  }
  sockaddr_in addr{};
  unique_fd listener = make_listener(&addr);
  std::vector<std::string> bufs(read_fds.size(), std::string(8, '\0'));

  // Started by tasks on the workers (the overloads without a runtime), as a server would.
  auto started = rt.task([&] {
    std::vector<heddle::future<std::size_t>> reads;
    for (std::size_t i = 0; i < read_fds.size(); ++i)
      reads.push_back(io::read(read_fds[i], std::as_writable_bytes(std::span(bufs[i]))));
    return reads;
  });
  auto acc = rt.task([&] { return io::accept(listener.get()); }).get();
  std::vector<heddle::future<std::size_t>> reads = std::move(started).get();
  for (auto& r : reads) EXPECT_FALSE(r.is_ready());

  // The workers are free: plenty of tasks run while everything above waits.
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(heartbeats(rt, 10), 10);
    rt.task([] { heddle::parallel_for(0, 1000, [](int) { heddle_test::spin_work(100); }); }).get();
    std::this_thread::sleep_for(2ms);
  }
  for (auto& r : reads) EXPECT_FALSE(r.is_ready());
  EXPECT_FALSE(acc.is_ready());
  sampler.stop();
  EXPECT_EQ(sampler.blocked(), 0) << sampler.first_blocked();
  EXPECT_GT(sampler.samples(), 0);

  // And everything completes once there is something to do.
  for (std::size_t i = 0; i < peer_fds.size(); ++i) ASSERT_EQ(::write(peer_fds[i], "data", 4), 4);
  unique_fd client = connect_blocking(addr);
  for (std::size_t i = 0; i < reads.size(); ++i) {
    ASSERT_EQ(*reads[i], 4u);
    EXPECT_EQ(bufs[i].substr(0, 4), "data");
  }
  ASSERT_EQ(outcome_text(acc), "ok");
  unique_fd accepted(*acc);
  EXPECT_TRUE(is_nonblocking(accepted.get()));
}

}  // namespace

}  // namespace echo_server_test
