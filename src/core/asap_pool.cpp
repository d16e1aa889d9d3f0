// SPDX-License-Identifier: Apache-2.0
#include "asap_pool.hpp"

#include <system_error>

#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/trace.hpp"
#include "runtime_core.hpp"

namespace heddle::core_detail {

asap_pool::asap_pool(runtime_core* core, unsigned threads, std::size_t stack_bytes) : core_(core) {
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t t;
    const int rc = pthread_create(&t, &attr, &thread_entry, this);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      stop();
      throw std::system_error(rc, std::generic_category(), "heddle: cannot start an asap pool thread");
    }
    threads_.push_back(t);
  }
}

asap_pool::~asap_pool() { stop(); }

void asap_pool::offer(task_base* t) {
  queue_.push(t);
  // Read-modify-writes on both sides: either the offer sees the thread idle, or the thread sees
  // the bumped signal and does not sleep.
  signal_.fetch_add(1, std::memory_order_seq_cst);
  if (idle_.load(std::memory_order_seq_cst) != 0) futex_wake(signal_, 1);
}

void* asap_pool::thread_entry(void* arg) {
  static_cast<asap_pool*>(arg)->thread_main();
  return nullptr;
}

void asap_pool::thread_main() {
  heddle::trace::set_thread_name("asap pool");
  lending_core = core_;
  for (;;) {
    if (task_base* t = queue_.pop()) {
      runtime_core::run(t, trace::how::successor);
      continue;
    }
    const std::uint32_t seen = signal_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) break;
    idle_.fetch_add(1, std::memory_order_seq_cst);
    if (!queue_.maybe_nonempty() && !stopping_.load(std::memory_order_acquire)) futex_wait(signal_, seen);
    idle_.fetch_sub(1, std::memory_order_relaxed);
  }
  lending_core = nullptr;
}

void asap_pool::stop() noexcept {
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;
  signal_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(signal_, static_cast<int>(threads_.size()));
  for (pthread_t t : threads_) pthread_join(t, nullptr);
  threads_.clear();
  while (task_base* t = queue_.pop()) t->vt->discard(t);
}

}  // namespace heddle::core_detail
