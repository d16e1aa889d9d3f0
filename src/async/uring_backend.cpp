// SPDX-License-Identifier: Apache-2.0
// The io_uring file backend. Submitting threads prepare and submit under a short lock (io_uring's
// submission queue has one producer); the service thread alone reaps the completion queue,
// sleeping in io_uring_wait_cqe. A submission never waits for the I/O itself.
#include <liburing.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <system_error>

#include "file_engine.hpp"

namespace heddle::async_detail {

namespace {

class uring_backend final : public file_backend_impl {
 public:
  uring_backend() : file_backend_impl("heddle-uring", "file engine (io_uring)") {
    const int rc = io_uring_queue_init(ring_entries, &ring_, 0);
    if (rc < 0) throw std::system_error(-rc, std::generic_category(), "heddle: io_uring_queue_init");
    start_threads();
  }
  ~uring_backend() override {
    stop();
    io_uring_queue_exit(&ring_);
  }

  io::file_backend kind() const noexcept override { return io::file_backend::io_uring; }

  void submit(file_op* op) noexcept override {
    std::unique_lock lock(sq_m_);
    if (stopping_) {
      lock.unlock();
      return op->fail(stopped_error());
    }
    // Release, paired with the service thread's acquire: the kernel's rings carry `op` across, but
    // ThreadSanitizer cannot see them; the count makes the hand-off visible.
    in_flight_.fetch_add(1, std::memory_order_release);
    const int rc = push(op);
    if (rc < 0) {
      in_flight_.fetch_sub(1, std::memory_order_relaxed);
      lock.unlock();
      op->finish(rc);
    }
  }

 private:
  static constexpr unsigned ring_entries = 256;
  static constexpr std::size_t max_transfer = 0x7ffff000;  // Linux's MAX_RW_COUNT with 4 KiB pages

  // Under sq_m_. Puts one request (nullptr: the wake-up no-op) in the ring and submits it.
  int push(file_op* op) noexcept {
    io_uring_sqe* sqe;
    // The submission ring is full only of entries not yet submitted; submitting frees them.
    while (!(sqe = io_uring_get_sqe(&ring_))) {
      const int rc = io_uring_submit(&ring_);
      if (rc < 0 && rc != -EBUSY && rc != -EAGAIN && rc != -EINTR) return rc;
      if (rc <= 0) sched_yield();
    }
    if (!op) {
      io_uring_prep_nop(sqe);
    } else {
      // A request's length is 32 bits; Linux moves at most max_transfer bytes per call anyway, so
      // a bigger buffer gives a short transfer, as pread(2) would.
      const auto n = static_cast<unsigned>(std::min<std::size_t>(op->size, max_transfer));
      if (op->write) io_uring_prep_write(sqe, op->fd, op->data, n, op->offset);
      else io_uring_prep_read(sqe, op->fd, op->data, n, op->offset);
    }
    io_uring_sqe_set_data(sqe, op);
    for (;;) {
      const int rc = io_uring_submit(&ring_);
      if (rc >= 0) return 0;
      // The kernel is short of completion space for a moment: the service thread is reaping.
      if (rc == -EBUSY || rc == -EAGAIN || rc == -EINTR) {
        sched_yield();
        continue;
      }
      // The entry stays in the ring and goes out with a later submission: turn it into a no-op
      // whose completion is ignored, and let the caller fail the operation now.
      io_uring_prep_nop(sqe);
      io_uring_sqe_set_data(sqe, &dropped_);
      return rc;
    }
  }

  // Operations in flight are not failed here: the service thread reaps them all before it returns.
  void request_stop() noexcept override {
    std::lock_guard lock(sq_m_);
    stopping_ = true;
    push(nullptr);  // a no-op whose completion wakes the service thread
  }

  void run() override {
    bool stop_seen = false;
    while (!stop_seen || in_flight_.load(std::memory_order_acquire) != 0) {
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe(&ring_, &cqe);
      if (rc < 0) {
        if (rc == -EINTR || rc == -EAGAIN) continue;
        break;  // the ring is broken; stop() still joins us
      }
      unsigned head, seen = 0;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        ++seen;
        auto* op = static_cast<file_op*>(io_uring_cqe_get_data(cqe));
        if (!op) {
          stop_seen = true;
          continue;
        }
        if (static_cast<void*>(op) == &dropped_) continue;
        const long res = cqe->res;
        in_flight_.fetch_sub(1, std::memory_order_acq_rel);
        op->finish(res);
      }
      io_uring_cq_advance(&ring_, seen);
    }
  }

  io_uring ring_{};
  char dropped_ = 0;  // its address marks an entry whose operation already failed
  std::mutex sq_m_;
  bool stopping_ = false;  // under sq_m_
  std::atomic<std::size_t> in_flight_{0};
};

}  // namespace

std::unique_ptr<file_backend_impl> make_uring_backend() { return std::make_unique<uring_backend>(); }

}  // namespace heddle::async_detail
