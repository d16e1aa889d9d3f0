// SPDX-License-Identifier: Apache-2.0
// I/O as futures. No worker ever sleeps in a system call for these:
//
// - Streams (sockets, pipes, eventfds, terminals): read, write, accept and connect first try the
//   operation without blocking on the calling thread; if it would block, the runtime's fd engine
//   (one service thread over epoll) waits for readiness and performs it. Sockets are read and
//   written with MSG_DONTWAIT and keep their mode; other descriptors (pipes, eventfds...) and the
//   sockets given to accept and connect are switched to non-blocking mode (O_NONBLOCK). Operations
//   on one descriptor and direction complete in the order they were started. A read or write of
//   zero bytes completes at once with 0.
// - Files: a pread whose data the page cache holds completes on the calling thread (preadv2 with
//   RWF_NOWAIT: the future is ready when pread returns, no hop through a service thread); other
//   reads, O_DIRECT reads and every pwrite go through the runtime's io_uring engine (one ring, one
//   service thread reaping completions), or through a small pool of I/O threads where io_uring is
//   unavailable or HEDDLE_FILE_IO=threads says so. As with pread(2), a descriptor that cannot seek (a pipe, a
//   socket) gives ESPIPE, and an offset beyond the largest off_t gives EINVAL.
//
// - Readiness: readable and writable wait until a stream descriptor can be read or written.
//
// Results: the number of bytes transferred (possibly fewer than asked, as with read(2)), the new
// descriptor for accept. Errors: std::system_error with the errno (ECONNRESET, EBADF, EPIPE...);
// a read at the end of the stream fails with io::errc::end_of_file. A token that is cancelled while
// a stream operation waits completes it with operation_cancelled (file operations are not
// cancellable). When the runtime stops, pending operations complete with task_cancelled.
//
// The buffer must stay alive and untouched until the future is ready. Cancel an operation (or let
// it complete) before closing its descriptor: epoll forgets a closed descriptor silently.
//
// Calling: every call is thread-safe and may be made from any thread (a worker, a thread outside
// every runtime, a service thread running a short_task successor), on one descriptor from several
// threads too (each direction keeps start order). A call with a runtime starts the operation on it
// (`rt` must be alive; a stopping one gives a future failed with task_cancelled). Without one, the
// operation belongs to the calling thread's runtime: its worker's, the one it runs a successor for
// or has entered (runtime::execute), else the default runtime, started on first use.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "heddle/async/detail/start_op.hpp"
#include "heddle/async/errors.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle::async_detail {
HEDDLE_EXPORT core_detail::future_state<std::size_t>* read(core_detail::runtime_core* core, int fd,
                                                           std::span<std::byte> buf, const cancellation_token& t);
HEDDLE_EXPORT core_detail::future_state<std::size_t>* write(core_detail::runtime_core* core, int fd,
                                                            std::span<const std::byte> buf,
                                                            const cancellation_token& t);
HEDDLE_EXPORT core_detail::future_state<int>* accept(core_detail::runtime_core* core, int fd,
                                                     const cancellation_token& t);
HEDDLE_EXPORT core_detail::future_state<void>* connect(core_detail::runtime_core* core, int fd, const sockaddr* addr,
                                                       socklen_t len, const cancellation_token& t);
HEDDLE_EXPORT core_detail::future_state<void>* readable(core_detail::runtime_core* core, int fd,
                                                        const cancellation_token& t);
HEDDLE_EXPORT core_detail::future_state<void>* writable(core_detail::runtime_core* core, int fd,
                                                        const cancellation_token& t);
HEDDLE_EXPORT core_detail::future_state<std::size_t>* pread(core_detail::runtime_core* core, int fd,
                                                            std::span<std::byte> buf, std::uint64_t offset);
HEDDLE_EXPORT core_detail::future_state<std::size_t>* pwrite(core_detail::runtime_core* core, int fd,
                                                             std::span<const std::byte> buf, std::uint64_t offset);
}  // namespace heddle::async_detail

namespace heddle::io {

enum class file_backend { io_uring, threads };

// Reads up to buf.size() bytes (at least one, unless buf is empty).
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<std::size_t> read(runtime& rt, int fd, std::span<std::byte> buf, const cancellation_token& t = {}) {
  return async_detail::start_on<async_detail::read>(rt, fd, buf, t);
}
inline future<std::size_t> read(int fd, std::span<std::byte> buf, const cancellation_token& t = {}) {
  return async_detail::start_here<async_detail::read>(fd, buf, t);
}

// Writes up to buf.size() bytes (at least one, unless buf is empty). Never raises SIGPIPE: a
// closed peer gives EPIPE.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<std::size_t> write(runtime& rt, int fd, std::span<const std::byte> buf,
                                 const cancellation_token& t = {}) {
  return async_detail::start_on<async_detail::write>(rt, fd, buf, t);
}
inline future<std::size_t> write(int fd, std::span<const std::byte> buf, const cancellation_token& t = {}) {
  return async_detail::start_here<async_detail::write>(fd, buf, t);
}

// Accepts a connection on a listening socket: the new socket, non-blocking and close-on-exec.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<int> accept(runtime& rt, int listen_fd, const cancellation_token& t = {}) {
  return async_detail::start_on<async_detail::accept>(rt, listen_fd, t);
}
inline future<int> accept(int listen_fd, const cancellation_token& t = {}) {
  return async_detail::start_here<async_detail::accept>(listen_fd, t);
}

// Connects a socket; the address is copied before the call returns.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<void> connect(runtime& rt, int fd, const sockaddr* addr, socklen_t len,
                            const cancellation_token& t = {}) {
  return async_detail::start_on<async_detail::connect>(rt, fd, addr, len, t);
}
inline future<void> connect(int fd, const sockaddr* addr, socklen_t len, const cancellation_token& t = {}) {
  return async_detail::start_here<async_detail::connect>(fd, addr, len, t);
}

// Ready once `fd` can be read without blocking (data, the end of the stream, or an error waits
// there), or written without blocking; nothing is read or written. Descriptors are left in their
// mode. In the FIFO of their direction, like reads and writes.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<void> readable(runtime& rt, int fd, const cancellation_token& t = {}) {
  return async_detail::start_on<async_detail::readable>(rt, fd, t);
}
inline future<void> readable(int fd, const cancellation_token& t = {}) {
  return async_detail::start_here<async_detail::readable>(fd, t);
}
inline future<void> writable(runtime& rt, int fd, const cancellation_token& t = {}) {
  return async_detail::start_on<async_detail::writable>(rt, fd, t);
}
inline future<void> writable(int fd, const cancellation_token& t = {}) {
  return async_detail::start_here<async_detail::writable>(fd, t);
}

// Reads up to buf.size() bytes of a file at `offset`.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<std::size_t> pread(runtime& rt, int fd, std::span<std::byte> buf, std::uint64_t offset) {
  return async_detail::start_on<async_detail::pread>(rt, fd, buf, offset);
}
inline future<std::size_t> pread(int fd, std::span<std::byte> buf, std::uint64_t offset) {
  return async_detail::start_here<async_detail::pread>(fd, buf, offset);
}

// Writes up to buf.size() bytes of a file at `offset`.
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<std::size_t> pwrite(runtime& rt, int fd, std::span<const std::byte> buf, std::uint64_t offset) {
  return async_detail::start_on<async_detail::pwrite>(rt, fd, buf, offset);
}
inline future<std::size_t> pwrite(int fd, std::span<const std::byte> buf, std::uint64_t offset) {
  return async_detail::start_here<async_detail::pwrite>(fd, buf, offset);
}

// Chooses how `rt` serves pread/pwrite, before its first file operation; choosing the other
// backend afterwards is a std::logic_error (the one already serving is accepted).
// io_uring where the kernel refuses a ring gives std::system_error.
// Thread-safe; any thread (task_cancelled once `rt` is stopping).
HEDDLE_EXPORT void use_file_backend(runtime& rt, file_backend backend);
// The backend serving `rt` (chosen now if no file operation has run yet).
// Thread-safe; any thread (task_cancelled once `rt` is stopping).
HEDDLE_EXPORT file_backend file_backend_of(runtime& rt);

}  // namespace heddle::io
