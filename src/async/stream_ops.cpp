// SPDX-License-Identifier: Apache-2.0
// read, write, accept and connect: the system calls each operation tries, and their results.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "fd_engine.hpp"
#include "heddle/async/io.hpp"

namespace heddle::async_detail {

namespace {

using outcome = stream_op::outcome;

std::exception_ptr errno_error(int err, const char* what) {
  return std::make_exception_ptr(std::system_error(err, std::generic_category(), what));
}

// A descriptor that is not a socket is read and written with read(2)/write(2), which block unless
// the descriptor is in non-blocking mode: switch it, as the header says.
int ensure_nonblocking(int fd) noexcept {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return errno;
  if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) return errno;
  return 0;
}

bool would_block(int err) noexcept { return err == EAGAIN || err == EWOULDBLOCK; }

// write(2) on a pipe whose reader is gone raises SIGPIPE, which would kill the process: block it
// on this thread for the call, and take back the one the call raised.
ssize_t write_without_sigpipe(int fd, const void* p, std::size_t n) noexcept {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigemptyset(&pending);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  const ssize_t r = ::write(fd, p, n);
  const int err = errno;
  if (r < 0 && err == EPIPE && !was_pending) {
    const timespec zero{};
    sigtimedwait(&pipe_only, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return r;
}

template <class T>
struct stream_record : op_state<T>, stream_op {
  template <class Self>
  stream_record(Self*, const char* what, int fd_, direction d, outcome (*try_it)(stream_op*) noexcept) noexcept
      : op_state<T>(&op_vtable<Self>::table, what), stream_op{} {
    trace = &this->op_state<T>::trace;
    attempt = try_it;
    store_error = [](stream_op* b, std::exception_ptr e) noexcept { static_cast<Self*>(b)->set_error(std::move(e)); };
    state = this;
    fd = fd_;
    dir = d;
  }
};

struct read_op final : stream_record<std::size_t> {
  read_op(int fd, std::span<std::byte> b) noexcept : stream_record(this, "read", fd, in, &try_read), buf(b) {}
  std::span<std::byte> buf;

  static outcome try_read(stream_op* base) noexcept {
    auto* op = static_cast<read_op*>(base);
    // Nothing to read: done, as read(2) of zero bytes is (recv on a stream socket would wait).
    if (op->buf.empty()) {
      op->set_value(std::size_t{0});
      return outcome::done;
    }
    ssize_t r = ::recv(op->fd, op->buf.data(), op->buf.size(), MSG_DONTWAIT);
    if (r < 0 && errno == ENOTSOCK) {
      if (const int err = ensure_nonblocking(op->fd)) {
        op->set_error(errno_error(err, "heddle::io::read"));
        return outcome::done;
      }
      do r = ::read(op->fd, op->buf.data(), op->buf.size());
      while (r < 0 && errno == EINTR);
    }
    if (r < 0) {
      if (would_block(errno)) return outcome::would_block;
      if (errno == EINTR) return try_read(base);
      op->set_error(errno_error(errno, "heddle::io::read"));
    } else if (r == 0 && !op->buf.empty()) {
      op->set_error(std::make_exception_ptr(std::system_error(io::errc::end_of_file, "heddle::io::read")));
    } else {
      op->set_value(static_cast<std::size_t>(r));
    }
    return outcome::done;
  }
};

struct write_op final : stream_record<std::size_t> {
  write_op(int fd, std::span<const std::byte> b) noexcept : stream_record(this, "write", fd, out, &try_write), buf(b) {}
  std::span<const std::byte> buf;

  static outcome try_write(stream_op* base) noexcept {
    auto* op = static_cast<write_op*>(base);
    if (op->buf.empty()) {
      op->set_value(std::size_t{0});
      return outcome::done;
    }
    ssize_t r = ::send(op->fd, op->buf.data(), op->buf.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r < 0 && errno == ENOTSOCK) {
      if (const int err = ensure_nonblocking(op->fd)) {
        op->set_error(errno_error(err, "heddle::io::write"));
        return outcome::done;
      }
      do r = write_without_sigpipe(op->fd, op->buf.data(), op->buf.size());
      while (r < 0 && errno == EINTR);
    }
    if (r < 0) {
      if (would_block(errno)) return outcome::would_block;
      if (errno == EINTR) return try_write(base);
      op->set_error(errno_error(errno, "heddle::io::write"));
    } else {
      op->set_value(static_cast<std::size_t>(r));
    }
    return outcome::done;
  }
};

struct accept_op final : stream_record<int> {
  explicit accept_op(int fd) noexcept : stream_record(this, "accept", fd, in, &try_accept) {}

  static outcome try_accept(stream_op* base) noexcept {
    auto* op = static_cast<accept_op*>(base);
    for (;;) {
      const int s = ::accept4(op->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (s >= 0) {
        op->set_value(s);
        return outcome::done;
      }
      // A connection that was reset while queued: take the next one.
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (would_block(errno)) return outcome::would_block;
      op->set_error(errno_error(errno, "heddle::io::accept"));
      return outcome::done;
    }
  }
};

struct connect_op final : stream_record<void> {
  connect_op(int fd, const sockaddr* a, socklen_t n) noexcept
      : stream_record(this, "connect", fd, out, &try_connect), len(n) {
    std::memcpy(&addr, a, n);
  }
  sockaddr_storage addr{};
  socklen_t len;
  bool started = false;

  static outcome try_connect(stream_op* base) noexcept {
    auto* op = static_cast<connect_op*>(base);
    if (!op->started) {
      op->started = true;
      if (const int err = ensure_nonblocking(op->fd)) {
        op->set_error(errno_error(err, "heddle::io::connect"));
        return outcome::done;
      }
      if (::connect(op->fd, reinterpret_cast<const sockaddr*>(&op->addr), op->len) == 0) {
        op->set_value();
        return outcome::done;
      }
      if (errno == EINPROGRESS || errno == EINTR) return outcome::would_block;
      op->set_error(errno_error(errno, "heddle::io::connect"));
      return outcome::done;
    }
    // Writable: the connection is made or has failed; SO_ERROR says which.
    int err = 0;
    socklen_t n = sizeof err;
    if (getsockopt(op->fd, SOL_SOCKET, SO_ERROR, &err, &n) < 0) err = errno;
    if (err == EINPROGRESS || err == EALREADY) return outcome::would_block;
    if (err) op->set_error(errno_error(err, "heddle::io::connect"));
    else op->set_value();
    return outcome::done;
  }
};

// readable/writable: ready when poll(2) says so. An error or hang-up counts as ready (the read or
// write that follows reports it); a descriptor that is not open fails with EBADF.
struct readiness_op final : stream_record<void> {
  readiness_op(int fd, direction d) noexcept
      : stream_record(this, d == in ? "readable" : "writable", fd, d, &try_poll) {}

  static outcome try_poll(stream_op* base) noexcept {
    auto* op = static_cast<readiness_op*>(base);
    pollfd p{op->fd, static_cast<short>(op->dir == in ? POLLIN : POLLOUT), 0};
    int r;
    do r = ::poll(&p, 1, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
      op->set_error(errno_error(errno, op->dir == in ? "heddle::io::readable" : "heddle::io::writable"));
    } else if (p.revents & POLLNVAL) {
      op->set_error(errno_error(EBADF, op->dir == in ? "heddle::io::readable" : "heddle::io::writable"));
    } else if (r == 0) {
      return outcome::would_block;
    } else {
      op->set_value();
    }
    return outcome::done;
  }
};

template <class Op, class T>
core_detail::future_state<T>* start_stream(core_detail::runtime_core* core, Op* op, const cancellation_token& token) {
  try {
    engine_of<fd_engine>(core).start(op, token);
  } catch (...) {
    op->store_error(op, std::current_exception());
    op->publish();
  }
  return op;
}

}  // namespace

core_detail::future_state<std::size_t>* read(core_detail::runtime_core* core, int fd, std::span<std::byte> buf,
                                             const cancellation_token& t) {
  return start_stream<read_op, std::size_t>(core, core_detail::make_record<read_op>(fd, buf), t);
}

core_detail::future_state<std::size_t>* write(core_detail::runtime_core* core, int fd, std::span<const std::byte> buf,
                                              const cancellation_token& t) {
  return start_stream<write_op, std::size_t>(core, core_detail::make_record<write_op>(fd, buf), t);
}

core_detail::future_state<int>* accept(core_detail::runtime_core* core, int fd, const cancellation_token& t) {
  if (const int err = ensure_nonblocking(fd)) return failed<int>(errno_error(err, "heddle::io::accept"));
  return start_stream<accept_op, int>(core, core_detail::make_record<accept_op>(fd), t);
}

core_detail::future_state<void>* connect(core_detail::runtime_core* core, int fd, const sockaddr* addr, socklen_t len,
                                         const cancellation_token& t) {
  if (!addr || len == 0 || len > sizeof(sockaddr_storage))
    return failed<void>(errno_error(EINVAL, "heddle::io::connect: bad address length"));
  return start_stream<connect_op, void>(core, core_detail::make_record<connect_op>(fd, addr, len), t);
}

core_detail::future_state<void>* readable(core_detail::runtime_core* core, int fd, const cancellation_token& t) {
  return start_stream<readiness_op, void>(core, core_detail::make_record<readiness_op>(fd, stream_op::in), t);
}

core_detail::future_state<void>* writable(core_detail::runtime_core* core, int fd, const cancellation_token& t) {
  return start_stream<readiness_op, void>(core, core_detail::make_record<readiness_op>(fd, stream_op::out), t);
}

}  // namespace heddle::async_detail
