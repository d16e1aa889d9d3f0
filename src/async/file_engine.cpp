// SPDX-License-Identifier: Apache-2.0
#include "file_engine.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>

#include "heddle/core/detail/access.hpp"

namespace heddle::async_detail {

void file_op::finish(long result) noexcept {
  if (result < 0)
    fail(std::make_exception_ptr(std::system_error(static_cast<int>(-result), std::generic_category(),
                                                   write ? "heddle::io::pwrite" : "heddle::io::pread")));
  else if (result == 0 && size != 0 && !write)
    fail(std::make_exception_ptr(std::system_error(io::errc::end_of_file, "heddle::io::pread")));
  else succeed(static_cast<std::size_t>(result));
}

namespace {

// HEDDLE_FILE_IO=io_uring|threads, or empty for "io_uring if the kernel allows it".
bool env_choice(io::file_backend& out) {
  const char* v = std::getenv("HEDDLE_FILE_IO");
  if (!v || !*v) return false;
  if (std::strcmp(v, "io_uring") == 0) out = io::file_backend::io_uring;
  else if (std::strcmp(v, "threads") == 0) out = io::file_backend::threads;
  else throw configuration_error(std::string("heddle: HEDDLE_FILE_IO='") + v + "' is neither 'io_uring' nor 'threads'");
  return true;
}

}  // namespace

file_backend_impl& file_engine::make_locked(io::file_backend b) {
  if (stopped_.load(std::memory_order_relaxed))
    throw task_cancelled("heddle: the runtime is stopping; it starts no more operations");
  impl_ = b == io::file_backend::io_uring ? make_uring_backend() : make_thread_backend();
  ready_.store(impl_.get(), std::memory_order_release);
  return *impl_;
}

file_backend_impl& file_engine::backend() {
  if (file_backend_impl* p = ready_.load(std::memory_order_acquire)) [[likely]]
    return *p;
  std::lock_guard lock(m_);
  if (impl_) return *impl_;
  io::file_backend b;
  if (env_choice(b)) return make_locked(b);
  try {
    return make_locked(io::file_backend::io_uring);
  } catch (const std::system_error&) {
    return make_locked(io::file_backend::threads);  // no io_uring here (old kernel, seccomp...)
  }
}

void file_engine::choose(io::file_backend b) {
  std::lock_guard lock(m_);
  if (impl_) {
    if (impl_->kind() == b) return;
    throw std::logic_error("heddle::io::use_file_backend: this runtime already serves files with the other backend");
  }
  make_locked(b);
}

void file_engine::stop() noexcept {
  std::lock_guard lock(m_);
  stopped_.store(true, std::memory_order_release);
  if (impl_) impl_->stop();
}

namespace {

// A read whose data the page cache holds is served on the calling thread, as the stream operations
// try theirs first: preadv2 with RWF_NOWAIT copies what is cached and returns, or fails with EAGAIN
// where it would have to wait for the device (io_uring itself makes this try when a read is
// submitted, before it hands the read to its workers). It spares the hop through the engine's
// thread and the successor's wake-up, which cost more than the copy of a cached block. Not for
// O_DIRECT descriptors: their RWF_NOWAIT read still waits for the device. Any failure (EAGAIN, a
// kernel or file system without RWF_NOWAIT, a pipe, a bad descriptor) leaves the read to the
// engine's path, which reports errors as before, and so does a short read that is not at the end of
// the file. Returns whether the read is done.
bool read_cached(file_op* op) {
  const int flags = ::fcntl(op->fd, F_GETFL);
  if (flags < 0 || (flags & O_DIRECT)) return false;
  iovec v{op->data, op->size};
  const ssize_t n = ::preadv2(op->fd, &v, 1, static_cast<off_t>(op->offset), RWF_NOWAIT);
  if (n < 0) return false;
  if (static_cast<std::size_t>(n) < op->size) {
    // Fewer bytes: the end of the file, or the rest is not cached (or being read in). pread(2) on
    // a regular file is short only at its end: where the file goes on, the backend reads it all.
    struct stat st;
    if (::fstat(op->fd, &st) != 0 ||
        op->offset + static_cast<std::uint64_t>(n) < static_cast<std::uint64_t>(st.st_size))
      return false;
  }
  op->finish(n);
  return true;
}

core_detail::future_state<std::size_t>* start_file(core_detail::runtime_core* core, file_op* op) {
  // What pread(2) refuses, io_uring would take as "the file position" (offset -1) or serve from
  // a pipe or socket ignoring the offset: refuse it here, for both backends alike.
  if (op->offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) {
    op->finish(-EINVAL);
    return op;
  }
  try {
    file_engine& engine = engine_of<file_engine>(core);
    if (!op->write && op->size != 0 && !engine.stopped() && read_cached(op)) return op;
    if (::lseek(op->fd, 0, SEEK_CUR) < 0) {
      op->finish(-errno);  // ESPIPE for a pipe or socket, EBADF for a bad descriptor
      return op;
    }
    engine.backend().submit(op);
  } catch (...) {
    op->fail(std::current_exception());
  }
  return op;
}
}  // namespace

core_detail::future_state<std::size_t>* pread(core_detail::runtime_core* core, int fd, std::span<std::byte> buf,
                                              std::uint64_t offset) {
  return start_file(core, core_detail::make_record<file_op>(fd, buf.data(), buf.size(), offset, false));
}

core_detail::future_state<std::size_t>* pwrite(core_detail::runtime_core* core, int fd, std::span<const std::byte> buf,
                                               std::uint64_t offset) {
  return start_file(core, core_detail::make_record<file_op>(fd, const_cast<std::byte*>(buf.data()), buf.size(), offset,
                                                            true));
}

}  // namespace heddle::async_detail

namespace heddle::io {

void use_file_backend(runtime& rt, file_backend backend) {
  heddle::async_detail::engine_of<heddle::async_detail::file_engine>(heddle::core_detail::access::core_of(rt))
      .choose(backend);
}

file_backend file_backend_of(runtime& rt) {
  return heddle::async_detail::engine_of<heddle::async_detail::file_engine>(heddle::core_detail::access::core_of(rt))
      .backend()
      .kind();
}

}  // namespace heddle::io
