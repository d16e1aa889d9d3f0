// The file backend where io_uring is unavailable: a few I/O threads that make the blocking pread
// and pwrite calls, so that workers never do. Two threads keep a slow disk from serializing every
// read behind one call, without adding much to a small machine.
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "file_engine.hpp"

#include "heddle/core/trace.hpp"

namespace heddle::async_detail {

namespace {

class thread_backend final : public file_backend_impl {
 public:
  thread_backend() {
    for (int i = 0; i < io_threads; ++i) threads_.emplace_back([this] { thread_main(); });
  }
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

  void stop() noexcept override {
    {
      std::lock_guard lock(m_);
      if (stopping_) return;
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
    // The threads finish what they started; what never started is cancelled.
    while (file_op* op = head_) {
      head_ = op->next_queued;
      op->fail(stopped_error());
    }
    tail_ = nullptr;
  }

 private:
  static constexpr int io_threads = 2;

  void thread_main() {
    pthread_setname_np(pthread_self(), "heddle-fileio");
    heddle::trace::set_thread_name("file I/O thread");
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
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<file_backend_impl> make_thread_backend() { return std::make_unique<thread_backend>(); }

}  // namespace heddle::async_detail
