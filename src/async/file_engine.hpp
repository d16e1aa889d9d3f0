// SPDX-License-Identifier: Apache-2.0
// The file engine of one runtime: pread/pwrite as futures. Two backends behind one service:
// io_uring (one ring; submitting threads take a short lock, one service thread reaps completions)
// and, where io_uring is unavailable or HEDDLE_FILE_IO=threads asks for it, a pool of I/O threads
// that make the blocking calls so that workers never do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "heddle/async/io.hpp"
#include "op_state.hpp"
#include "service_thread.hpp"

namespace heddle::async_detail {

struct file_op final : op_state<std::size_t> {
  file_op(int fd_, std::byte* p, std::size_t n, std::uint64_t off, bool is_write) noexcept
      : op_state<std::size_t>(&op_vtable<file_op>::table, is_write ? "pwrite" : "pread"),
        fd(fd_),
        data(p),
        size(n),
        offset(off),
        write(is_write) {}
  int fd;
  std::byte* data;
  std::size_t size;
  std::uint64_t offset;
  bool write;
  file_op* next_queued = nullptr;  // the threads backend's queue

  // Completes with the result of the system call: a byte count or -errno.
  void finish(long result) noexcept;
};

// A backend's threads start with it; its stop() (service_thread's) waits for operations in flight,
// fails the queued ones and joins the threads.
class file_backend_impl : public service_thread {
 public:
  ~file_backend_impl() override = default;
  virtual io::file_backend kind() const noexcept = 0;
  // Takes the operation; it completes later (or at once with an error).
  virtual void submit(file_op* op) noexcept = 0;

 protected:
  using service_thread::service_thread;
};

std::unique_ptr<file_backend_impl> make_uring_backend();  // throws std::system_error if the kernel refuses
std::unique_ptr<file_backend_impl> make_thread_backend();

class file_engine final : public core_detail::runtime_service {
 public:
  explicit file_engine(core_detail::runtime_core*) {}
  ~file_engine() override { stop(); }

  file_backend_impl& backend();     // the chosen one, or the default chosen now
  void choose(io::file_backend b);  // before the first operation
  void stop() noexcept override;
  // Whether stop() has begun: the runtime starts no more operations, not even a cached read.
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }

 private:
  file_backend_impl& make_locked(io::file_backend b);

  std::mutex m_;
  std::unique_ptr<file_backend_impl> impl_;
  std::atomic<file_backend_impl*> ready_{nullptr};
  std::atomic<bool> stopped_{false};  // written under m_
};

}  // namespace heddle::async_detail
