// Where idle and waiting workers sleep. A worker registers as a sleeper, looks for work once more,
// and only then sleeps on its own futex word; a waker takes a registered sleeper off the list
// before waking it, so a burst of submissions costs one wake-up, not one per submission.
//
// Lost wake-ups: submissions from outside the runtime (injection, express) fence between queuing
// and reading the sleeper count, against the sleeper's registration, so one of the two always sees
// the other. A worker's own spawns skip that fence on the hot path; a worker that sleeps while
// another is still running therefore sleeps with a timeout (`watch_interval`), so a spawn that
// raced with its registration waits at most that long for a thief. A worker that is the last one
// awake sleeps without timeout: with all workers asleep nothing can be spawned, and an idle
// runtime uses no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::detail {

class parking_lot {
 public:
  static constexpr std::int64_t watch_interval_ns = 2'000'000;

  explicit parking_lot(unsigned workers) : workers_(workers) { sleepers_list_.reserve(workers); }

  // Sleeps unless has_work() is true once w is registered. Returns when woken, on timeout, or at once.
  template <class HasWork>
  void park(worker* w, HasWork&& has_work) {
    w->wake_word.store(0, std::memory_order_relaxed);
    std::uint32_t others_awake;
    {
      std::lock_guard lock(m_);
      sleepers_list_.push_back(w);
      others_awake = workers_ - static_cast<std::uint32_t>(sleepers_list_.size());
      sleepers.fetch_add(1, std::memory_order_seq_cst);
    }
    if (!has_work()) {
      w->stats.parks.bump();
      const std::int64_t timeout = others_awake > 0 ? watch_interval_ns : -1;
      while (w->wake_word.load(std::memory_order_acquire) == 0) {
        futex_wait(w->wake_word, 0, timeout);
        if (timeout >= 0) break;
      }
    }
    unregister(w);
  }

  // Wakes one sleeper if there is any. The caller fences before if it must not miss one.
  bool wake_one() noexcept {
    if (sleepers.load(std::memory_order_relaxed) == 0) return false;
    worker* v;
    {
      std::lock_guard lock(m_);
      if (sleepers_list_.empty()) return false;
      v = sleepers_list_.back();
      sleepers_list_.pop_back();
      sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    wakeups.fetch_add(1, std::memory_order_relaxed);
    wake(v);
    return true;
  }

  void wake_all() noexcept {
    std::vector<worker*> all;
    {
      std::lock_guard lock(m_);
      all.swap(sleepers_list_);
      sleepers_list_.reserve(workers_);
      sleepers.store(0, std::memory_order_relaxed);
    }
    for (worker* v : all) wake(v);
  }

  static void wake(worker* v) noexcept {
    v->wake_word.store(1, std::memory_order_release);
    futex_wake(v->wake_word, 1);
  }

  std::atomic<std::uint32_t> sleepers{0};
  std::atomic<std::uint64_t> wakeups{0};  // sleepers taken off the list by wake_one

 private:
  void unregister(worker* w) noexcept {
    std::lock_guard lock(m_);
    for (auto it = sleepers_list_.begin(); it != sleepers_list_.end(); ++it)
      if (*it == w) {
        sleepers_list_.erase(it);
        sleepers.fetch_sub(1, std::memory_order_relaxed);
        return;
      }
  }

  const std::uint32_t workers_;
  std::mutex m_;
  std::vector<worker*> sleepers_list_;
};

}  // namespace heddle::detail
