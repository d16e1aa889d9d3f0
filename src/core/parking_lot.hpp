// SPDX-License-Identifier: Apache-2.0
// Where idle and waiting workers sleep. A worker registers as a sleeper, looks for work once more,
// and only then sleeps on its own futex word; a waker takes a registered sleeper off the list
// before waking it, so a burst of submissions costs one wake-up, not one per submission.
//
// Two kinds of sleepers: idle workers (in the scheduling loop, they take any work) and waiting
// workers (forcing a future or a group, they take only work the helping policy allows). A wake-up
// goes to an idle worker when there is one, so it is never spent on a waiter that may not take
// the new work.
//
// Lost wake-ups: the publisher of work and a sleeper each store (the work; the registration) and
// then load (the sleeper count; the queues), and one of the two must see the other's store.
// Submissions from outside the runtime (injection, express) read the sleeper count with a
// read-modify-write, which is ordered against the registration (also one). A worker's own spawn
// cannot afford a fence: it pairs a compiler barrier with the sleeper's heavy side of an
// asymmetric fence (asymmetric_fence.hpp), so that no wake-up is lost on any path.
//
// Every sleeper but the last one awake still sleeps with a timeout, as a safety net and as a
// detector: a timed-out idle sleep during which no wake-up went to anybody and after which work is
// waiting is a lost wake-up, counted in runtime_stats::lost_wakeups (the wake-up tests assert zero).
// Where the kernel has no membarrier (or HEDDLE_PARKING=timed) spawns can miss a registering
// sleeper, and the timeout is what finds the work: 1 ms, doubling to 64 ms while nothing wakes the
// sleeper. The last worker to fall asleep sleeps without timeout: with every worker asleep nothing
// can be spawned, and an idle runtime uses no CPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "asymmetric_fence.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::core_detail {

class parking_lot {
 public:
  enum class sleeper_kind { idle, waiting };
  enum class wake_reason { woken, timed_out, not_parked };

  explicit parking_lot(unsigned workers) : workers_(workers), exact_(asymmetric_fence_available()) {
    idle_.reserve(workers);
    waiting_.reserve(workers);
  }

  // Sleeps unless has_work() is true once w is registered.
  template <class HasWork>
  wake_reason park(worker* w, sleeper_kind kind, HasWork&& has_work) {
    w->wake_word.store(0, std::memory_order_relaxed);
    std::uint32_t others_awake;
    std::uint64_t wakeups_before;
    {
      std::lock_guard lock(m_);
      HEDDLE_ASSERT(!listed(w), "a worker parks while still registered as a sleeper");
      (kind == sleeper_kind::idle ? idle_ : waiting_).push_back(w);
      HEDDLE_ASSERT(idle_.size() + waiting_.size() <= workers_, "more sleepers than workers");
      others_awake = workers_ - static_cast<std::uint32_t>(idle_.size() + waiting_.size());
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      HEDDLE_ASSERT(counted_under_lock(), "the sleeper count differs from the lists (both change under the lock)");
      wakeups_before = wakeups.load(std::memory_order_relaxed);
    }
    if (exact_) asymmetric_fence_heavy();  // a spawn that missed the registration is visible now
    wake_reason reason = wake_reason::not_parked;
    if (!has_work()) {
      w->stats.parks.bump();
      if (trace::on()) trace::emit_instant(trace::kind::park_begin, nullptr, kind == sleeper_kind::waiting);
      if (others_awake == 0) {
        while (w->wake_word.load(std::memory_order_acquire) == 0) futex_wait(w->wake_word, 0);
        reason = wake_reason::woken;
      } else {
        futex_wait(w->wake_word, 0, exact_ ? safety_net_ns : w->watch_timeout_ns);
        reason = w->wake_word.load(std::memory_order_acquire) ? wake_reason::woken : wake_reason::timed_out;
      }
      // Also when the session began during the sleep: the trace then shows it from the session's start.
      if (trace::on()) trace::emit_instant(trace::kind::park_end, nullptr, 0, reason == wake_reason::woken);
    }
    const auto [chosen, wakeups_after] = unregister(w);
    if (reason == wake_reason::timed_out) {
      if (chosen) {
        reason = wake_reason::woken;  // a waker took w off its list as the sleep timed out
      } else if (kind == sleeper_kind::idle && wakeups_after == wakeups_before && has_work()) {
        // Work arrived while w slept and no wake-up went to anybody. (Work whose publisher is
        // between its queue and its wake_one as the sleep ends counts too; that needs a publisher
        // after a whole quiet safety-net period, landing in the microsecond after it.)
        lost_wakeups.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (reason != wake_reason::not_parked)
      w->watch_timeout_ns = reason == wake_reason::timed_out ? std::min(w->watch_timeout_ns * 2, max_watch_ns)
                                                             : min_watch_ns;
    return reason;
  }

  // Wakes one sleeper, preferring an idle one. `published`: the caller has just queued work that
  // no sleeper may miss. The count is then read with a read-modify-write, which is ordered against
  // a sleeper's registration (also one) so that either this sees the sleeper or the sleeper sees the
  // work; unlike a fence, ThreadSanitizer understands it.
  bool wake_one(bool published = false) noexcept {
    const std::uint32_t n = published ? sleepers.fetch_add(0, std::memory_order_seq_cst)
                                      : sleepers.load(std::memory_order_relaxed);
    if (n == 0) return false;
    worker* v;
    {
      std::lock_guard lock(m_);
      auto& list = !idle_.empty() ? idle_ : waiting_;
      if (list.empty()) return false;
      v = list.back();  // the most recently parked: its cache is the warmest
      list.pop_back();
      sleepers.fetch_sub(1, std::memory_order_relaxed);
      HEDDLE_ASSERT(counted_under_lock(), "the sleeper count differs from the lists (both change under the lock)");
      wakeups.fetch_add(1, std::memory_order_relaxed);  // under the lock: sleepers compare it (park)
    }
    if (trace::on()) trace::emit_instant(trace::kind::wake, nullptr, 0, v->index);
    wake(v);
    return true;
  }

  void wake_all() noexcept {
    std::lock_guard lock(m_);
    for (worker* v : idle_) wake(v);
    for (worker* v : waiting_) wake(v);
    idle_.clear();
    waiting_.clear();
    sleepers.store(0, std::memory_order_relaxed);
  }

  static void wake(worker* v) noexcept {
    v->wake_word.store(1, std::memory_order_release);
    futex_wake(v->wake_word, 1);
  }

  // The timed sleep without the asymmetric fence, where it is what finds a missed spawn.
  static constexpr std::int64_t min_watch_ns = 1'000'000;
  static constexpr std::int64_t max_watch_ns = 64'000'000;
  // The timed sleep with the fence, where no wake-up should be missed: long enough to cost no CPU
  // worth measuring, short enough that a lost wake-up (a bug) costs a visible delay, not a hang.
  static constexpr std::int64_t safety_net_ns = 1'000'000'000;

  std::atomic<std::uint32_t> sleepers{0};
  std::atomic<std::uint64_t> wakeups{0};       // sleepers taken off a list by wake_one
  std::atomic<std::uint64_t> lost_wakeups{0};  // see park()

 private:
  struct unregistered {
    bool chosen;  // w was no longer listed: a waker took it, and its wake is on the way
    std::uint64_t wakeups;
  };
  unregistered unregister(worker* w) noexcept {
    std::lock_guard lock(m_);
    const std::uint64_t n = wakeups.load(std::memory_order_relaxed);
    for (auto* list : {&idle_, &waiting_}) {
      auto it = std::find(list->begin(), list->end(), w);
      if (it != list->end()) {
        list->erase(it);
        sleepers.fetch_sub(1, std::memory_order_relaxed);
        HEDDLE_ASSERT(!listed(w), "a worker was registered as a sleeper twice");
        HEDDLE_ASSERT(counted_under_lock(), "the sleeper count differs from the lists (both change under the lock)");
        return {false, n};
      }
    }
    return {true, n};
  }

  // For the checks (HEDDLE_ASSERT), under m_: whether w is on a list; whether the sleeper count
  // is the lists' length, as every change of either under m_ keeps it.
  bool listed(const worker* w) const noexcept {
    return std::find(idle_.begin(), idle_.end(), w) != idle_.end() ||
           std::find(waiting_.begin(), waiting_.end(), w) != waiting_.end();
  }
  bool counted_under_lock() const noexcept {
    return sleepers.load(std::memory_order_relaxed) == idle_.size() + waiting_.size();
  }

  const std::uint32_t workers_;
  const bool exact_;  // the asymmetric fence works here
  std::mutex m_;
  std::vector<worker*> idle_;
  std::vector<worker*> waiting_;
};

}  // namespace heddle::core_detail
