// SPDX-License-Identifier: Apache-2.0
#include "co_echo.hpp"

#include "fd_limit.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace heddle::bench::spawn {

namespace {

constexpr std::size_t message_bytes = 64;
constexpr std::size_t buffer_bytes = 4096;  // the server's read size, both styles

// ---- the server as coroutines: one per connection, reading and writing back until end of file ----
heddle::co_task<void> co_serve(int fd) {
  std::array<std::byte, buffer_bytes> buf;
  for (;;) {
    std::size_t n = 0;
    try {
      n = co_await heddle::io::read(fd, buf);
    } catch (const std::system_error& e) {
      if (e.code() == heddle::io::errc::end_of_file) co_return;  // the client closed
      throw;
    }
    for (std::size_t done = 0; done < n;) done += co_await heddle::io::write(fd, std::span(buf).first(n).subspan(done));
  }
}

// ---- the same server as callbacks: examples/echo_server.cpp's connection ----
struct connection : std::enable_shared_from_this<connection> {
  connection(int fd, std::atomic<int>* open) : fd(fd), open(open) {}
  ~connection() { open->fetch_sub(1, std::memory_order_release); }
  int fd;
  std::atomic<int>* open;
  std::array<std::byte, buffer_bytes> buf;

  void serve() {
    // At end of file the read fails, its successor never runs, and the last copy of `self` goes.
    (void)heddle::io::read(fd, buf).then([self = shared_from_this()](std::size_t n) { self->echo(n, 0); });
  }
  void echo(std::size_t n, std::size_t done) {
    (void)heddle::io::write(fd, std::span(buf).first(n).subspan(done))
        .then([self = shared_from_this(), n, done](std::size_t w) {
          if (done + w < n) self->echo(n, done + w);
          else self->serve();
        });
  }
};

void write_all(int fd, const std::byte* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::system_error(errno, std::generic_category(), "coroutines: echo client write");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}
void read_all(int fd, std::byte* p, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw std::system_error(r == 0 ? EPIPE : errno, std::generic_category(), "coroutines: echo client read");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

}  // namespace

double time_echo(heddle::runtime& rt, echo_style style, int connections, int rounds) {
  raise_fd_limit(2 * static_cast<std::size_t>(connections) + 64);
  std::vector<int> client(connections), server(connections);
  for (int i = 0; i < connections; ++i) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw std::system_error(errno, std::generic_category(), "coroutines: socketpair " + std::to_string(i));
    client[i] = sv[0];
    server[i] = sv[1];
  }
  std::vector<heddle::future<void>> served;
  std::atomic<int> open{0};
  if (style == echo_style::coroutines) {
    served.reserve(connections);
    for (int fd : server) served.push_back(rt.spawn(co_serve(fd)));
  } else {
    open = connections;
    rt.task([&] {
        for (int fd : server) std::make_shared<connection>(fd, &open)->serve();
      }).get();
  }

  std::array<std::byte, message_bytes> out{}, in{};
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < connections; ++i) {
      std::memset(out.data(), (r * 31 + i) & 0xff, out.size());
      write_all(client[i], out.data(), out.size());
    }
    for (int i = 0; i < connections; ++i) {
      read_all(client[i], in.data(), in.size());
      if (in[0] != std::byte((r * 31 + i) & 0xff) || in[message_bytes - 1] != in[0])
        throw std::runtime_error("coroutines: connection " + std::to_string(i) + " echoed another message in round " +
                                 std::to_string(r));
    }
  }
  const auto t1 = std::chrono::steady_clock::now();

  for (int fd : client) ::close(fd);  // each server sees end of file and ends
  for (auto& f : served) f.get();
  while (open.load(std::memory_order_acquire) != 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  for (int fd : server) ::close(fd);
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace heddle::bench::spawn
