// SPDX-License-Identifier: Apache-2.0
// The timer engine of one runtime: every pending timer in a binary heap ordered by (deadline,
// start order), and one service thread asleep in the kernel until the earliest deadline. Starting
// or cancelling a timer is O(log n) under one mutex; the service thread wakes only when a timer
// is due or a new one becomes the earliest.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "heddle/core/cancellation.hpp"
#include "heddle/core/detail/service.hpp"
#include "op_state.hpp"
#include "service_thread.hpp"

namespace heddle::async_detail {

class timer_engine final : public core_detail::runtime_service, private service_thread {
 public:
  explicit timer_engine(core_detail::runtime_core* core);
  ~timer_engine() override;

  core_detail::future_state<void>* start(std::chrono::steady_clock::time_point deadline,
                                         const cancellation_token& token);
  void stop() noexcept override { service_thread::stop(); }

 private:
  struct timer_op;
  struct timer_cancel_link;
  static constexpr std::size_t unqueued = ~std::size_t{0};

  void run() override;
  void request_stop() noexcept override;
  void fail_pending() noexcept override;
  static void on_cancel(core_detail::cancel_hook* h) noexcept;
  // Heap of timer_op*, each knowing its index (for O(log n) removal on cancellation).
  void heap_push(timer_op* op);
  timer_op* heap_pop();
  void heap_erase(timer_op* op);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  static bool earlier(const timer_op* a, const timer_op* b) noexcept;
  void place(std::size_t i, timer_op* op) noexcept;
  // Completes a timer the service thread took off the heap.
  static void finish(timer_op* op, std::exception_ptr error) noexcept;

  core_detail::runtime_core* core_;
  std::mutex m_;
  std::condition_variable wake_;
  std::vector<timer_op*> heap_;
  std::uint64_t next_seq_ = 0;
  bool stopping_ = false;
  cancels_in_flight cancelling_;
};

}  // namespace heddle::async_detail
