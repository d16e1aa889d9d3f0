// SPDX-License-Identifier: Apache-2.0
// The auxiliary threads of strategy::asap. A successor is offered twice, on the workers' express
// lane and here; whichever side claims it first runs it, the other finds it claimed and drops its
// half of the offer. The pool is what bounds the latency when every worker is deep in a long task.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "heddle/core/detail/task_record.hpp"
#include "task_queue.hpp"

namespace heddle::core_detail {

class runtime_core;

class asap_pool {
 public:
  asap_pool(runtime_core* core, unsigned threads, std::size_t stack_bytes);
  ~asap_pool();  // stops, if stop() was not called
  asap_pool(const asap_pool&) = delete;
  asap_pool& operator=(const asap_pool&) = delete;

  void offer(task_base* t);
  // Joins the threads; what is still queued is discarded.
  void stop() noexcept;

 private:
  static void* thread_entry(void* arg);
  void thread_main();

  runtime_core* core_;
  task_queue queue_;
  std::atomic<std::uint32_t> signal_{0};  // bumped on every offer; the futex word idle threads sleep on
  std::atomic<std::uint32_t> idle_{0};
  std::atomic<bool> stopping_{false};
  std::vector<pthread_t> threads_;
};

}  // namespace heddle::core_detail
