// SPDX-License-Identifier: Apache-2.0
// A TCP connection over the loopback between two processes, for the am suite's raw TCP references
// (heddle-bench-am-raw's round trips and transfers). Every function throws
// std::runtime_error naming the call that failed.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace heddle::bench::am {

// A socket listening on 127.0.0.1 at a port the kernel picks, written to `port`.
inline int tcp_listener(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 4) != 0)
    throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  port = ntohs(sa.sin_port);
  return fd;
}

// Disables Nagle's algorithm: a small message leaves at once, as a round trip needs.
inline void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A connection to 127.0.0.1:port, TCP_NODELAY.
inline int tcp_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  no_delay(fd);
  return fd;
}

// The next connection to `listener`, TCP_NODELAY.
inline int tcp_accept(int listener) {
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("accept: ") + std::strerror(errno));
  no_delay(fd);
  return fd;
}

// All n bytes of p, however many sends that takes.
inline void full_write(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w <= 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Exactly n bytes into p. `busy`: polls the socket (MSG_DONTWAIT) instead of sleeping in recv, as
// heddle's polling does.
inline void full_read(int fd, void* p, std::size_t n, bool busy = false) {
  char* c = static_cast<char*>(p);
  while (n) {
    const ssize_t r = ::recv(fd, c, n, busy ? MSG_DONTWAIT : 0);
    if (r < 0 && busy && errno == EAGAIN) continue;
    if (r <= 0)
      throw std::runtime_error(r == 0 ? std::string("recv: the peer closed the connection")
                                      : std::string("recv: ") + std::strerror(errno));
    c += r;
    n -= static_cast<std::size_t>(r);
  }
}

}  // namespace heddle::bench::am
