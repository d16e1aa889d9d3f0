// SPDX-License-Identifier: Apache-2.0
// The fd engine of one runtime: stream operations (read, write, accept, connect) that would block
// wait here, in a FIFO per descriptor and direction, and one service thread sleeps in epoll_wait
// until a descriptor is ready, then performs the waiting operations itself (one system call per
// completion). Descriptors are armed with EPOLLONESHOT and re-armed only while operations wait,
// so an idle descriptor costs nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "heddle/async/detail/epoll_set.hpp"
#include "heddle/core/cancellation.hpp"
#include "op_state.hpp"
#include "service_thread.hpp"

namespace heddle::async_detail {

class fd_engine;

// The engine's view of a stream operation; the record is also the future's state.
struct stream_op {
  enum class outcome { done, would_block };
  enum direction : std::uint8_t { in = 0, out = 1 };

  // Tries the system call without blocking; on `done` the result (or error) is stored, not published.
  outcome (*attempt)(stream_op*) noexcept;
  // Stores an error as the result, not published.
  void (*store_error)(stream_op*, std::exception_ptr) noexcept;
  core_detail::future_state_base* state;  // the same record, as the future's state
  operation_span* trace;                  // the record's (op_state::trace)
  fd_engine* engine = nullptr;
  int fd;
  direction dir;
  bool queued = false;
  stream_op* prev = nullptr;
  stream_op* next = nullptr;
  core_detail::cancel_state* token = nullptr;  // where `hook` is registered, if anywhere
  cancellation_token token_owner;              // keeps `token` alive if every source and token is dropped
  op_cancel_hook<stream_op> hook;

  // Publishes the stored result once the operation has left the engine.
  void publish() noexcept;
};

class fd_engine final : public core_detail::runtime_service, private service_thread {
 public:
  explicit fd_engine(core_detail::runtime_core* core);
  ~fd_engine() override;

  // Runs op: at once if nothing is queued before it and the call does not block, else queued.
  void start(stream_op* op, const cancellation_token& token) noexcept;
  void stop() noexcept override { service_thread::stop(); }

 private:
  struct fd_entry;
  static constexpr int chunk_bits = 10;
  static constexpr int num_chunks = 1024;  // descriptors below 2^20

  fd_entry* entry(int fd);
  void run() override;
  void request_stop() noexcept override;
  void fail_pending() noexcept override;
  void on_ready(int fd, std::uint32_t events) noexcept;
  // Arms the descriptor for the directions that have waiters; false with errno on failure.
  bool arm(fd_entry& e) noexcept;
  static void on_cancel(core_detail::cancel_hook* h) noexcept;

  epoll_set epoll_;  // woken with data.fd == -1 by stop()
  std::atomic<bool> stopping_{false};
  cancels_in_flight cancelling_;
  std::mutex chunks_m_;
  std::unique_ptr<std::atomic<fd_entry*>[]> chunks_;
  std::vector<stream_op*> done_;  // the service thread's list of operations one event completed
};

}  // namespace heddle::async_detail
