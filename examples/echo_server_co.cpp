// SPDX-License-Identifier: Apache-2.0
// examples/echo_server.cpp written as coroutines: the same TCP echo server on two workers that never
// block, each connection a loop of co_await io::read and io::write, the listening socket a loop of
// co_await io::accept, the clients coroutines too, and the whole server stopped through one
// cancellation token. What the callback version spreads over `then` chains and shared_ptr
// lifetimes reads here in order; a suspended coroutine holds no worker.
#include <heddle/heddle.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace {

// One connection: read what comes, write it back, until the peer closes (end_of_file).
heddle::co_task<void> serve(int fd) {
  std::array<std::byte, 4096> buf;
  try {
    for (;;) {
      const std::size_t n = co_await heddle::io::read(fd, buf);
      for (std::size_t done = 0; done < n;)
        done += co_await heddle::io::write(fd, std::span(buf).first(n).subspan(done));
    }
  } catch (const std::system_error& e) {
    if (e.code() != heddle::io::errc::end_of_file)
      std::fprintf(stderr, "echo_server_co: connection %d: %s\n", fd, e.what());
  }
  close(fd);
}

// Accepts until `stop` is cancelled; each connection is a coroutine of its own, running in parallel.
heddle::co_task<int> accept_loop(int listener, heddle::cancellation_token stop) {
  int accepted = 0;
  try {
    for (;;) {
      const int fd = co_await heddle::io::accept(listener, stop);
      (void)heddle::spawn(serve(fd));  // nobody waits: the coroutine closes its connection
      ++accepted;
    }
  } catch (const heddle::operation_cancelled&) {
  }
  co_return accepted;
}

// One client: connect, send a line, read it back.
heddle::co_task<bool> client(const sockaddr_in& addr, int i) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const std::string line = "hello from client " + std::to_string(i) + "\n";
  std::string reply(line.size(), '\0');
  co_await heddle::io::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  for (std::size_t sent = 0; sent < line.size();)
    sent += co_await heddle::io::write(fd, std::as_bytes(std::span(line)).subspan(sent));
  for (std::size_t got = 0; got < reply.size();)
    got += co_await heddle::io::read(fd, std::as_writable_bytes(std::span(reply)).subspan(got));
  close(fd);
  co_return line == reply;
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
    std::perror("echo_server_co: bind/listen");
    return 1;
  }
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  heddle::cancellation_source stop;
  heddle::future<int> server = rt.spawn(accept_loop(listener, stop.token()));

  std::vector<heddle::future<bool>> clients;
  for (int i = 0; i < 100; ++i) clients.push_back(rt.spawn(client(addr, i)));
  int good = 0;
  for (auto& c : clients) good += c.get() ? 1 : 0;
  stop.cancel();  // the pending accept fails with operation_cancelled: the loop ends
  const int accepted = server.get();
  close(listener);
  std::printf("%d of 100 clients got their line back; %d connections accepted\n", good, accepted);
  return good == 100 && accepted == 100 ? 0 : 1;
}
