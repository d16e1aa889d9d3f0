// SPDX-License-Identifier: Apache-2.0
// The file backend where io_uring is unavailable: a few I/O threads that make the blocking pread
// and pwrite calls, so that workers never do. Two threads keep a slow disk from serializing every
// read behind one call, without adding much to a small machine.
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>

#include "file_engine.hpp"

namespace heddle::async_detail {

namespace {

class thread_backend final : public file_backend_impl {
 public:
  thread_backend() : file_backend_impl("heddle-fileio", "file I/O thread") { start_threads(io_threads); }
  ~thread_backend() override { stop(); }

  io::file_backend kind() const noexcept override { return io::file_backend::threads; }

  void submit(file_op* op) noexcept override {
    {
      std::unique_lock lock(m_);
      if (stopping_) {
        lock.unlock();
        return op->fail(stopped_error());
      }
      op->next_queued = nullptr;
      if (tail_) tail_->next_queued = op;
      else head_ = op;
      tail_ = op;
    }
    ready_.notify_one();
  }

 private:
  static constexpr unsigned io_threads = 2;

  void request_stop() noexcept override {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    ready_.notify_all();
  }

  // The threads finish what they started; what never started is cancelled.
  void fail_pending() noexcept override {
    while (file_op* op = head_) {
      head_ = op->next_queued;
      op->fail(stopped_error());
    }
    tail_ = nullptr;
  }

  void run() override {
    std::unique_lock lock(m_);
    for (;;) {
      ready_.wait(lock, [this] { return head_ || stopping_; });
      if (stopping_) return;
      file_op* op = head_;
      head_ = op->next_queued;
      if (!head_) tail_ = nullptr;
      lock.unlock();
      ssize_t r;
      do {
        r = op->write ? ::pwrite(op->fd, op->data, op->size, static_cast<off_t>(op->offset))
                      : ::pread(op->fd, op->data, op->size, static_cast<off_t>(op->offset));
      } while (r < 0 && errno == EINTR);
      op->finish(r < 0 ? -errno : r);
      lock.lock();
    }
  }

  std::mutex m_;
  std::condition_variable ready_;
  file_op* head_ = nullptr;
  file_op* tail_ = nullptr;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<file_backend_impl> make_thread_backend() { return std::make_unique<thread_backend>(); }

}  // namespace heddle::async_detail
