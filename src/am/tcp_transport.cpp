// SPDX-License-Identifier: Apache-2.0
// The tcp backend: one TCP connection per pair of nodes. Node k listens on its address (or on the
// socket heddle-run made for it), connects to every node below it and accepts every node above;
// a connecting node first presents the session's secret, and a connection without it is closed.
// Sockets are non-blocking with TCP_NODELAY. The polling thread reads whatever has arrived and
// cuts it into frames (with one or two peers by a recv on each, with more from the connections an
// epoll set reports readable); the receiver sleeps in the epoll set (the async layer's epoll_set). A sender
// writes straight from the caller's memory (a thread that may wait waits for the socket); what the
// polling thread cannot write now is queued and flushed as the socket drains. A closed connection
// is a lost peer.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "heddle/async/detail/epoll_set.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "transports.hpp"

namespace heddle::am_detail {

namespace {

using clock = std::chrono::steady_clock;
constexpr char connect_magic[4] = {'H', 'D', 'L', 'T'};
// Puts and replies with at least this much data are read straight into the memory that waits for
// them (frame_sink::place): a buffer, a get's destination.
constexpr std::size_t direct_bytes = std::size_t{16} << 10;
// Up to this many peers, a poll is a recv on each connection (tcp_transport::poll).
constexpr unsigned recv_polled_peers = 2;
// Frames up to this size (header included) are sent as one piece (send_frame).
constexpr std::size_t small_frame_bytes = 256;
// A connection's staging area (read_from): what one recv may take.
constexpr std::size_t staging_bytes = std::size_t{64} << 10;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// The sends and receives of a connection's frames, as plain system calls: the C library's send and
// recv are cancellation points, whose bookkeeping (some 30 instructions a call, on the call path's
// two sends and two receives) heddle's threads never need. Same results and errno as send and recv
// with these flags.
ssize_t send_now(int fd, const void* p, std::size_t n) {
  return ::syscall(SYS_sendto, fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT, nullptr, 0);
}
ssize_t recv_now(int fd, void* p, std::size_t n) {
  return ::syscall(SYS_recvfrom, fd, p, n, MSG_DONTWAIT, nullptr, nullptr);
}

std::pair<std::string, std::string> host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    throw session_error("heddle::offload: tcp address '" + address + "': HOST:PORT expected");
  return {address.substr(0, colon), address.substr(colon + 1)};
}

addrinfo* resolve(const std::string& address, bool passive) {
  auto [host, port] = host_port(address);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw session_error("heddle::offload: tcp address '" + address + "': " + ::gai_strerror(rc));
  return res;
}

void set_nonblocking_nodelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Blocking helpers for the handshake, bounded by `deadline`.
bool wait_fd(int fd, short events, clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}
// Sends (out) or receives all n bytes, waiting for the socket until the deadline; false on failure.
bool transfer_all(int fd, std::byte* p, std::size_t n, bool out, clock::time_point deadline) {
  while (n > 0) {
    const ssize_t k = out ? ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : ::recv(fd, p, n, MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_fd(fd, out ? POLLOUT : POLLIN, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}
bool write_all(int fd, const void* p, std::size_t n, clock::time_point deadline) {
  return transfer_all(fd, static_cast<std::byte*>(const_cast<void*>(p)), n, true, deadline);
}
bool read_all(int fd, void* p, std::size_t n, clock::time_point deadline) {
  return transfer_all(fd, static_cast<std::byte*>(p), n, false, deadline);
}

class tcp_transport final : public transport {
 public:
  explicit tcp_transport(const session_options& o)
      : o_(o), poll_by_recv_(o.nodes <= 1 + recv_polled_peers), epoll_(epoll_data_t{.u32 = o.nodes}) {
    if (o.peers.size() != o.nodes)
      throw session_error("heddle::offload: the tcp backend needs every node's address: " +
                          std::to_string(o.peers.size()) + " given for " + std::to_string(o.nodes) +
                          " nodes (HEDDLE_PEERS, or session_options::peers)");
    if (o.secret.empty())
      throw session_error(
          "heddle::offload: the tcp backend needs a shared secret (HEDDLE_SECRET, or session_options::secret)");
    if (o.secret.size() > 1024) throw session_error("heddle::offload: the tcp secret is longer than 1024 bytes");
    peers_.resize(o.nodes);
    for (auto& p : peers_) p = std::make_unique<peer>();
  }
  ~tcp_transport() override {
    for (auto& p : peers_)
      if (p->fd >= 0) ::close(p->fd);
  }

  void start(frame_sink& sink) override {
    sink_ = &sink;
    const auto deadline = clock::now() + o_.connect_timeout;
    int listener = o_.listen_fd;
    bool own_listener = false;
    if (listener < 0 && o_.node + 1 < o_.nodes) {
      listener = listen_on(o_.peers[o_.node]);
      own_listener = true;
    }
    // Lower nodes: connect and present the secret.
    for (node_id to = 0; to < o_.node; ++to) peers_[to]->fd = connect_to(to, deadline);
    // Higher nodes: accept until each has connected with the secret.
    for (node_id left = o_.nodes - 1 - o_.node; left > 0;) {
      if (!wait_fd(listener, POLLIN, deadline)) {
        std::string missing;
        for (node_id n = o_.node + 1; n < o_.nodes; ++n)
          if (peers_[n]->fd < 0) {
            missing += ' ';  // appended piece by piece: " " + ... makes g++ 12 warn (-Wrestrict) wrongly
            missing += std::to_string(n);
          }
        if (own_listener) ::close(listener);
        throw peer_lost(o_.node + 1, "heddle::offload: node(s)" + missing + " did not connect within " +
                                         std::to_string(o_.connect_timeout.count()) + " ms");
      }
      if (accept_one(listener, deadline)) --left;
    }
    if (own_listener || o_.listen_fd >= 0) ::close(listener);

    for (node_id n = 0; n < o_.nodes; ++n) {
      if (n == o_.node) continue;
      set_nonblocking_nodelay(peers_[n]->fd);
      if (poll_by_recv_) continue;  // in the epoll set only while the receiver sleeps
      if (!epoll_.add(peers_[n]->fd, EPOLLIN, epoll_data_t{.u32 = n}))
        throw session_error("heddle::offload: node " + std::to_string(o_.node) +
                            " cannot watch its connection to node " + std::to_string(n) + ": " + std::strerror(errno));
    }
  }

  bool send(node_id, node_id to, const message_header& h, std::span<const std::byte> head,
            std::span<const std::byte> tail, bool wait, const std::shared_ptr<void>& tail_owner) override {
    const message_header::words w = h.pack();
    return send_frame(to, w, head, tail, wait, tail_owner);
  }
  // The engine packed the header: its words go out as they are.
  bool send_packed(node_id, node_id to, const message_header::words& header, std::span<const std::byte> payload,
                   bool wait) override {
    return send_frame(to, header, payload, {}, wait, {});
  }

  // With a few peers (poll_by_recv_) a poll is a recv on each connection, and the connections are
  // in no epoll set meanwhile: every frame sent to a socket that an epoll set watches runs the
  // set's wake-up callback inside its sender's send, which the round trip pays twice
  // (docs/benchmarks.md, "Fifth step" of the offload call path). With more, a poll reads only the
  // connections the epoll set reports readable: one look at the set's ready list, not a recv each.
  bool poll() override {
    bool any = false;
    for (node_id n = 0; n < o_.nodes; ++n) {
      if (n == o_.node) continue;
      peer& p = *peers_[n];
      if (p.closed || !p.has_queue.load(std::memory_order_relaxed)) continue;
      std::unique_lock lock(p.out_m, std::try_to_lock);
      // Bytes written count as traffic (transport::poll): the receiver keeps spinning.
      if (lock) any |= flush(n, p, false);
    }
    if (poll_by_recv_) {
      for (node_id n = 0; n < o_.nodes; ++n)
        if (n != o_.node && !peers_[n]->closed) any |= read_from(n, *peers_[n]);
      return any;
    }
    epoll_event evs[16];
    const int ready = epoll_.wait(evs, 0);
    for (int i = 0; i < ready; ++i) {
      const node_id n = evs[i].data.u32;
      if (n >= o_.nodes || peers_[n]->closed) continue;  // interrupt()'s wake is the sleeper's
      any |= read_from(n, *peers_[n]);
    }
    return any;
  }

  bool pending() const override { return false; }  // the receiver's epoll sees what is left

  void sleep(std::chrono::nanoseconds timeout) override {
    // Sockets with queued output are watched for room as well. Recv-polled connections join the
    // set for the sleep alone (an add reports a connection that is readable already: nothing that
    // came since the last poll is missed).
    for (node_id n = 0; n < o_.nodes; ++n) {
      if (n == o_.node || peers_[n]->closed) continue;
      const bool out = peers_[n]->has_queue.load(std::memory_order_relaxed);
      const std::uint32_t events = out ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
      if (poll_by_recv_) {
        epoll_.add(peers_[n]->fd, events, epoll_data_t{.u32 = n});
      } else if (out != peers_[n]->watching_out) {
        epoll_.modify(peers_[n]->fd, events, epoll_data_t{.u32 = n});
        peers_[n]->watching_out = out;
      }
    }
    epoll_event evs[16];
    const int ms = static_cast<int>(
        std::max<long long>(1, std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
    const int n = epoll_.wait(evs, ms);
    for (int i = 0; i < n; ++i)
      if (evs[i].data.u32 == o_.nodes) epoll_.clear_wake();
    // Every connection leaves the set, a lost one too (lose() may have run between its add and here).
    if (poll_by_recv_)
      for (node_id k = 0; k < o_.nodes; ++k)
        if (k != o_.node) epoll_.remove(peers_[k]->fd);
  }

  void interrupt() override { epoll_.wake(); }

 private:
  struct peer {
    int fd = -1;
    // Senders to this peer, one at a time; a sender that may wait for the socket waits holding it.
    heddle::core_detail::parking_mutex out_m;
    // What the polling thread could not write yet: copies, or a buffer's bytes where they lie
    // (with what keeps them alive).
    struct chunk {
      std::vector<std::byte> owned;
      std::span<const std::byte> bytes;
      std::shared_ptr<void> owner;
    };
    std::deque<chunk> queue;
    std::size_t queue_offset = 0;  // bytes of queue.front() already written
    std::atomic<bool> has_queue{false};
    bool watching_out = false;
    std::atomic<bool> closed{false};
    // Input, polling thread only: the frame being read.
    std::byte header[message_header::size];
    std::size_t header_have = 0;
    message_header h{};
    std::unique_ptr<std::byte[]> payload;  // not value-initialised: a frame's bytes overwrite it
    std::size_t payload_capacity = 0, payload_size = 0, payload_have = 0;
    // Direct placement: the first `prefix` payload bytes go to `payload`, then the sink is asked
    // (while `placeable`) where the rest goes; `placed` is its answer.
    bool placeable = false;
    std::size_t prefix = 0;
    placement placed;
    // What one recv took beyond the frame being read: [staged_begin, staged_end) of staging_bytes.
    std::unique_ptr<std::byte[]> staged;
    std::size_t staged_begin = 0, staged_end = 0;
  };

  int listen_on(const std::string& address) {
    addrinfo* res = resolve(address, true);
    int fd = -1;
    for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      const int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 64) != 0) {
        ::close(fd);
        fd = -1;
      }
    }
    ::freeaddrinfo(res);
    if (fd < 0)
      throw session_error("heddle::offload: node " + std::to_string(o_.node) + " cannot listen on " + address + ": " +
                          std::strerror(errno));
    return fd;
  }

  int connect_to(node_id to, clock::time_point deadline) {
    for (;;) {
      addrinfo* res = resolve(o_.peers[to], false);
      int fd = -1;
      for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
          ::close(fd);
          fd = -1;
        }
      }
      ::freeaddrinfo(res);
      if (fd >= 0) {
        const std::uint32_t node = o_.node, len = static_cast<std::uint32_t>(o_.secret.size());
        std::vector<char> hello(connect_magic, connect_magic + 4);
        hello.insert(hello.end(), reinterpret_cast<const char*>(&node), reinterpret_cast<const char*>(&node) + 4);
        hello.insert(hello.end(), reinterpret_cast<const char*>(&len), reinterpret_cast<const char*>(&len) + 4);
        hello.insert(hello.end(), o_.secret.begin(), o_.secret.end());
        if (write_all(fd, hello.data(), hello.size(), deadline)) return fd;
        ::close(fd);
      }
      if (clock::now() > deadline)
        throw peer_lost(to, "heddle::offload: node " + std::to_string(o_.node) + " cannot connect to node " +
                                std::to_string(to) + " at " + o_.peers[to] + ": " + std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // Accepts one connection; true if it was a node above this one with the secret.
  bool accept_one(int listener, clock::time_point deadline) {
    sockaddr_storage sa{};
    socklen_t len = sizeof sa;
    const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_CLOEXEC);
    if (fd < 0) return false;
    char host[INET6_ADDRSTRLEN + 8] = "?";
    if (sa.ss_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&sa)->sin_addr, host, sizeof host);
    const auto refuse = [&](const std::string& why) {
      std::fprintf(stderr, "heddle: node %u: refused a connection from %s: %s\n", o_.node, host, why.c_str());
      ::close(fd);
      return false;
    };
    char magic[4];
    std::uint32_t node = 0, secret_len = 0;
    const auto short_deadline = std::min(deadline, clock::now() + std::chrono::seconds(5));
    if (!read_all(fd, magic, 4, short_deadline) || std::memcmp(magic, connect_magic, 4) != 0)
      return refuse("not a heddle node");
    if (!read_all(fd, &node, 4, short_deadline) || !read_all(fd, &secret_len, 4, short_deadline))
      return refuse("a truncated greeting");
    if (secret_len > 1024) return refuse("a secret of " + std::to_string(secret_len) + " bytes");
    std::string secret(secret_len, '\0');
    if (!read_all(fd, secret.data(), secret_len, short_deadline)) return refuse("a truncated secret");
    // Compared in constant time: the secret's bytes do not leak through the timing.
    unsigned diff = secret.size() != o_.secret.size();
    for (std::size_t i = 0; i < std::min(secret.size(), o_.secret.size()); ++i) diff |= secret[i] ^ o_.secret[i];
    if (diff) return refuse("wrong secret");
    if (node <= o_.node || node >= o_.nodes) return refuse("it says it is node " + std::to_string(node));
    if (peers_[node]->fd >= 0) return refuse("node " + std::to_string(node) + " is connected already");
    peers_[node]->fd = fd;
    return true;
  }

  void lose(node_id n, peer& p, const std::string& why) {
    if (p.closed.exchange(true)) return;
    epoll_.remove(p.fd);
    ::shutdown(p.fd, SHUT_RDWR);
    sink_->lost(n, why);
  }

  // Writes the parts; what the socket does not take now is waited for (`wait`) or queued.
  void write_parts(node_id to, peer& p, std::span<const std::byte> (&parts)[3], bool wait,
                   const std::shared_ptr<void>& tail_owner) {
    std::size_t first = 0;
    while (first < 3) {
      iovec iov[3];
      int k = 0;
      for (std::size_t i = first; i < 3; ++i)
        if (!parts[i].empty()) iov[k++] = {const_cast<std::byte*>(parts[i].data()), parts[i].size()};
      if (k == 0) return;
      // One piece goes out by send: sendmsg's message header and iovec, copied in and checked,
      // make each call dearer (docs/benchmarks.md, "Fifth step" of the offload call path).
      ssize_t w;
      if (k == 1) {
        w = send_now(p.fd, iov[0].iov_base, iov[0].iov_len);
      } else {
        msghdr m{};
        m.msg_iov = iov;
        m.msg_iovlen = static_cast<std::size_t>(k);
        w = ::sendmsg(p.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) {
          const std::string why = errno_text("send");
          lose(to, p, why);
          throw peer_lost(to, "heddle::offload: node " + std::to_string(to) + ": " + why);
        }
        w = 0;
      }
      for (std::size_t i = first; i < 3 && w > 0; ++i) {
        const std::size_t take = std::min<std::size_t>(static_cast<std::size_t>(w), parts[i].size());
        parts[i] = parts[i].subspan(take);
        w -= static_cast<ssize_t>(take);
      }
      while (first < 3 && parts[first].empty()) ++first;
      if (first < 3) {
        if (!wait) {
          for (std::size_t i = first; i < 3; ++i) queue_bytes(p, parts[i], i == 2 ? tail_owner : nullptr);
          return;
        }
        wait_writable(to, p);
      }
    }
  }

  void queue_bytes(peer& p, std::span<const std::byte> b, const std::shared_ptr<void>& owner) {
    if (b.empty()) return;
    if (owner) {
      p.queue.push_back({{}, b, owner});
    } else {
      peer::chunk& c = p.queue.emplace_back();
      c.owned.assign(b.begin(), b.end());
      c.bytes = c.owned;
    }
    p.has_queue.store(true, std::memory_order_relaxed);
  }

  // Writes queued bytes (out_m held); all of them if `wait`. True if it wrote any.
  bool flush(node_id to, peer& p, bool wait) {
    bool wrote = false;
    while (!p.queue.empty()) {
      const std::span<const std::byte> front = p.queue.front().bytes;
      const ssize_t w = send_now(p.fd, front.data() + p.queue_offset, front.size() - p.queue_offset);
      if (w > 0) {
        wrote = true;
        p.queue_offset += static_cast<std::size_t>(w);
        if (p.queue_offset == front.size()) {
          p.queue.pop_front();
          p.queue_offset = 0;
        }
        continue;
      }
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno != EAGAIN) {
        const std::string why = errno_text("send");
        lose(to, p, why);
        throw peer_lost(to, "heddle::offload: node " + std::to_string(to) + ": " + why);
      }
      if (!wait) break;
      wait_writable(to, p);
    }
    p.has_queue.store(!p.queue.empty(), std::memory_order_relaxed);
    return wrote;
  }

  void wait_writable(node_id to, peer& p) {
    for (;;) {
      if (p.closed) throw peer_lost(to, "heddle::offload: the connection to node " + std::to_string(to) + " closed");
      pollfd pf{p.fd, POLLOUT, 0};
      const int rc = ::poll(&pf, 1, 100);
      if (rc > 0) return;
    }
  }

  // The header's words, then head and tail, written now or queued (transport::send).
  bool send_frame(node_id to, const message_header::words& header, std::span<const std::byte> head,
                  std::span<const std::byte> tail, bool wait, const std::shared_ptr<void>& tail_owner) {
    peer& p = *peers_[to];
    std::unique_lock lock(p.out_m, std::defer_lock);
    if (wait) lock.lock();
    else if (!lock.try_lock()) return false;
    if (p.closed) throw peer_lost(to, "heddle::offload: the connection to node " + std::to_string(to) + " is closed");
    std::span<const std::byte> parts[3] = {std::as_bytes(std::span(header)), head, tail};
    // A small frame (a call's arguments, a result) is copied behind its header: one piece, one send.
    alignas(64) std::byte joined[small_frame_bytes];
    if (tail.empty() && head.size() <= small_frame_bytes - message_header::size) {
      std::memcpy(joined, header.data(), message_header::size);
      if (!head.empty()) std::memcpy(joined + message_header::size, head.data(), head.size());
      parts[0] = std::span<const std::byte>(joined, message_header::size + head.size());
      parts[1] = {};
    }
    // One piece to a connection with nothing queued (every small call and reply): one send. What the
    // socket does not take at once (all of it after an error, which write_parts meets again and
    // reports) goes on below.
    if (parts[1].empty() && parts[2].empty() && !p.has_queue.load(std::memory_order_relaxed)) [[likely]] {
      const ssize_t w = send_now(p.fd, parts[0].data(), parts[0].size());
      if (w == static_cast<ssize_t>(parts[0].size())) [[likely]]
        return true;
      if (w > 0) parts[0] = parts[0].subspan(static_cast<std::size_t>(w));
    }
    if (wait) {
      flush(to, p, true);
      write_parts(to, p, parts, true, tail_owner);
    } else if (!p.queue.empty()) {
      queue_bytes(p, parts[0], {});
      queue_bytes(p, parts[1], {});
      queue_bytes(p, parts[2], tail_owner);
      flush(to, p, false);
    } else {
      write_parts(to, p, parts, false, tail_owner);
    }
    return true;
  }

  // Reads what has arrived from `n` and delivers the whole frames; true if any. One recv takes
  // everything the socket holds, up to the staging area's size, and the frames are cut from there:
  // a small call costs one recv on each side (a header and a payload each read by their own recv,
  // then a look that finds the socket empty, cost three). Only the rest of a large payload is read
  // straight where it goes. The socket is looked at again only when its last recv filled the
  // staging area; the receiver's next poll, or its epoll set, sees anything that came since.
  bool read_from(node_id n, peer& p) {
    bool any = false;
    bool drained = false;  // the last recv left the socket empty
    for (int recvs = 0;;) {
      // A whole frame in the staging area, not one to place: delivered from where it lies (the
      // common case, a call or a reply that one recv took whole).
      if (p.header_have == 0 && p.staged_end - p.staged_begin >= message_header::size) {
        const std::byte* at = p.staged.get() + p.staged_begin;
        const std::size_t staged = p.staged_end - p.staged_begin - message_header::size;
        message_header h;
        if (!decode_or_lose(n, p, at, h)) return any;
        if (h.payload_bytes <= staged && h.payload_bytes < direct_bytes) [[likely]] {
          p.staged_begin += message_header::size + h.payload_bytes;
          if (!deliver_or_lose(n, p, h, std::span<const std::byte>(at + message_header::size, h.payload_bytes)))
            return true;
          any = true;
          if (p.closed.load(std::memory_order_relaxed)) return true;
          continue;
        }
      }
      std::byte* dst;
      std::size_t want;
      if (p.header_have < message_header::size) {
        dst = p.header + p.header_have;
        want = message_header::size - p.header_have;
      } else if (p.placed.data && p.payload_have >= p.prefix) {
        dst = p.placed.data + (p.payload_have - p.prefix);
        want = p.payload_size - p.payload_have;
      } else {
        dst = p.payload.get() + p.payload_have;
        want = (p.placeable ? p.prefix : p.payload_size) - p.payload_have;
      }
      std::size_t got = 0;
      if (want && p.staged_begin < p.staged_end) {
        got = std::min(want, p.staged_end - p.staged_begin);
        std::memcpy(dst, p.staged.get() + p.staged_begin, got);
        p.staged_begin += got;
      } else if (want) {
        // Nothing staged: the frame needs the socket.
        if ((drained && p.header_have == 0) || recvs++ == 64) return any;
        const bool direct = want >= staging_bytes;
        if (!direct && !p.staged) p.staged.reset(new std::byte[staging_bytes]);
        const ssize_t r = recv_now(p.fd, direct ? dst : p.staged.get(), direct ? want : staging_bytes);
        if (r <= 0) {
          if (r < 0 && (errno == EAGAIN || errno == EINTR)) return any;
          lose(n, p, (r == 0 ? std::string("it closed its connection") : errno_text("recv")) + cut_short(p));
          return any;
        }
        drained = static_cast<std::size_t>(r) < (direct ? want : staging_bytes);
        if (!direct) {
          p.staged_begin = 0;
          p.staged_end = static_cast<std::size_t>(r);
          continue;
        }
        got = static_cast<std::size_t>(r);
      }
      if (p.header_have < message_header::size) {
        p.header_have += got;
        if (p.header_have < message_header::size) continue;
        if (!decode_or_lose(n, p, p.header, p.h)) return any;
        p.payload_size = p.h.payload_bytes;
        p.payload_have = 0;
        const std::size_t prefix = placement_prefix(p.h.kind);
        p.placeable = prefix != no_placement && p.payload_size >= prefix + direct_bytes;
        p.prefix = p.placeable ? prefix : 0;
        reserve(p, p.placeable ? p.prefix : p.payload_size);
      } else {
        p.payload_have += got;
      }
      if (p.placeable && p.payload_have == p.prefix) {
        p.placeable = false;
        p.placed = sink_->place(n, o_.node, p.h, std::span<const std::byte>(p.payload.get(), p.prefix));
        if (!p.placed.data) reserve(p, p.payload_size);
      }
      if (p.header_have == message_header::size && !p.placeable && p.payload_have == p.payload_size) {
        p.header_have = 0;
        message_header h = p.h;
        std::span<const std::byte> payload(p.payload.get(), p.payload_size);
        if (p.placed.data) {
          h.flags |= message_placed;
          payload = payload.first(p.prefix);
        }
        if (!deliver_or_lose(n, p, h, payload)) return true;
        any = true;
        p.placed = {};
        if (p.payload_capacity > (std::size_t{256} << 20)) {  // keep up to 256 MiB for the next large frame
          p.payload.reset();
          p.payload_capacity = 0;
        }
        if (p.closed.load(std::memory_order_relaxed)) return true;
      }
    }
  }

  // A frame's header decoded, or the peer lost for sending a corrupt one (false).
  bool decode_or_lose(node_id n, peer& p, const std::byte* header, message_header& h) {
    try {
      h = message_header::decode(std::span<const std::byte>(header, message_header::size), o_.max_message_bytes);
      return true;
    } catch (const decode_error& e) {
      lose(n, p, std::string("it sent a corrupt frame (") + e.what() + ")");
      return false;
    }
  }
  // A whole frame handed to the sink, or the peer lost for a payload the sink cannot decode (false).
  bool deliver_or_lose(node_id n, peer& p, const message_header& h, std::span<const std::byte> payload) {
    try {
      sink_->deliver(n, o_.node, h, payload);
      return true;
    } catch (const decode_error& e) {
      lose(n, p, std::string("it sent a corrupt frame (") + e.what() + ")");
      return false;
    }
  }

  // Where a connection ended inside a frame: a truncated message, not a peer that simply left.
  static std::string cut_short(const peer& p) {
    if (p.header_have == 0) return {};
    if (p.header_have < message_header::size)
      return " in the middle of a frame header (" + std::to_string(p.header_have) + " of " +
             std::to_string(message_header::size) + " bytes)";
    return std::string(" in the middle of a ") + to_string(p.h.kind) + " frame (" + std::to_string(p.payload_have) +
           " of " + std::to_string(p.payload_size) + " payload bytes)";
  }

  // Room for `bytes` of payload, keeping what was read of it.
  static void reserve(peer& p, std::size_t bytes) {
    if (bytes <= p.payload_capacity) return;
    std::unique_ptr<std::byte[]> bigger(new std::byte[bytes]);  // not value-initialised
    if (p.payload_have) std::memcpy(bigger.get(), p.payload.get(), p.payload_have);
    p.payload = std::move(bigger);
    p.payload_capacity = bytes;
  }

  session_options o_;
  // Few peers: polled by recv, in the epoll set only while the receiver sleeps (poll()).
  const bool poll_by_recv_;
  frame_sink* sink_ = nullptr;
  std::vector<std::unique_ptr<peer>> peers_;
  // What the receiver sleeps on (sleep()): every peer's socket once start() connected it (while
  // it sleeps, where poll_by_recv_), reported
  // with the peer's number, and interrupt()'s wake, reported as node number o_.nodes.
  heddle::async_detail::epoll_set epoll_;
};

}  // namespace

std::unique_ptr<transport> make_tcp_transport(const session_options& o) { return std::make_unique<tcp_transport>(o); }

}  // namespace heddle::am_detail
