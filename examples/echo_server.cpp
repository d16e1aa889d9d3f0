// SPDX-License-Identifier: Apache-2.0
// A TCP echo server on two workers that never block: each connection is a chain of io::read and
// io::write continuations, the listening socket waits in io::accept, and the whole server stops
// through one cancellation token. Clients connect with io::connect on the same runtime.
#include <heddle/heddle.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace {

// One connection: read what comes, write it back, until the peer closes.
struct connection : std::enable_shared_from_this<connection> {
  explicit connection(int fd) : fd(fd) {}
  ~connection() { close(fd); }
  int fd;
  std::array<std::byte, 4096> buf{};

  void serve() {
    // Nobody waits on these futures (hence the (void)): each step starts the next, and the
    // continuation's copy of `self` keeps the connection alive until the chain ends.
    (void)heddle::io::read(fd, buf).then([self = shared_from_this()](std::size_t n) { self->echo(n, 0); });
  }
  void echo(std::size_t n, std::size_t done) {
    (void)heddle::io::write(fd, std::span(buf).first(n).subspan(done))
        .then([self = shared_from_this(), n, done](std::size_t w) {
          if (done + w < n) self->echo(n, done + w);  // a partial write: the rest
          else self->serve();
        });
  }
};

void accept_loop(int listener, heddle::cancellation_token stop) {
  (void)heddle::io::accept(listener, stop).then([listener, stop](int fd) {
    std::make_shared<connection>(fd)->serve();
    accept_loop(listener, stop);
  });
}

}  // namespace

int main() {
  heddle::runtime rt(2);
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(listener, 128) != 0) {
    std::perror("echo_server: bind/listen");
    return 1;
  }
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  heddle::cancellation_source stop;
  rt.task([&] { accept_loop(listener, stop.token()); }).get();

  // 100 clients, each sending one line and reading it back.
  std::vector<heddle::future<bool>> clients;
  for (int i = 0; i < 100; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto line = std::make_shared<std::string>("hello from client " + std::to_string(i) + "\n");
    auto reply = std::make_shared<std::string>(line->size(), '\0');
    clients.push_back(heddle::io::connect(rt, fd, reinterpret_cast<sockaddr*>(&addr), len)
                          .then([fd, line] { return heddle::io::write(fd, std::as_bytes(std::span(*line))).get(); })
                          .then([fd, reply](std::size_t) {
                            std::size_t got = 0;
                            while (got < reply->size())  // forcing inside a task helps: no worker blocks
                              got += heddle::io::read(fd, std::as_writable_bytes(std::span(*reply)).subspan(got)).get();
                            close(fd);
                            return true;
                          })
                          .then([line, reply](bool) { return *line == *reply; }));
  }
  int good = 0;
  for (auto& c : clients) good += c.get() ? 1 : 0;
  stop.cancel();  // the pending accept fails with operation_cancelled; the server is done
  close(listener);
  std::printf("%d of 100 clients got their line back\n", good);
  const heddle::latency_summary l = rt.stats().latency(heddle::default_strategy);
  std::printf("successors of I/O completions: %llu, mean latency %.1f us, p99 %.1f us\n",
              static_cast<unsigned long long>(l.count), l.mean_ns / 1e3, static_cast<double>(l.p99_ns) / 1e3);
  return good == 100 ? 0 : 1;
}
