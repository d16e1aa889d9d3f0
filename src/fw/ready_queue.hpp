// SPDX-License-Identifier: Apache-2.0
// The threaded processor's ready list for reentrant modules: the ready module with the longest
// chain of work still behind it runs first (ties: the older event). With few events in flight this
// is what lets a handful of threads follow an event's critical path instead of whatever was made
// ready last; with many, it still finishes old events before it starts on new ones' long chains.
//
// One heap per worker (and one for pushes from other threads): a worker pushes what its modules
// made ready onto its own heap and takes from it first, so the heaps' locks and the events' state
// mostly stay in one core's cache; a worker whose heap is empty takes the best entry of another.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "heddle/core/detail/spin_wait.hpp"

namespace heddle::fw_detail {

struct event_state;

class ready_queue {
 public:
  struct entry {
    double priority;  // the remaining chain of work, in seconds
    std::uint64_t event;
    event_state* state;
    std::uint32_t module;
  };

  // The list's order: true if `a` runs after `b` (a shorter chain of work behind it, or on a tie
  // a newer event).
  static bool before(const entry& a, const entry& b) noexcept {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.event > b.event;
  }

  // `lanes`: one per worker, plus one for every other thread.
  explicit ready_queue(unsigned lanes) : lanes_(std::make_unique<lane[]>(lanes)), count_(lanes) {}

  void push(const entry& e, unsigned lane_index) {
    lane& l = lanes_[std::min(lane_index, count_ - 1)];
    l.m.lock();
    try {
      l.heap.push_back(e);
    } catch (...) {
      l.m.unlock();
      throw;
    }
    std::push_heap(l.heap.begin(), l.heap.end(), order{});
    l.published(l.heap);
    l.m.unlock();
  }

  // A worker about to run `e` directly (a module its last one made ready, module_scheduler's
  // chain) without a push and a pop: if its own lane holds a better entry, `e` goes there and
  // the best comes back instead, so the order stays the one push-then-pop would give. No lock
  // when the lane is empty or its best is worse: only the worker pushes onto its lane, others only
  // take from it, so its best is never better than what the worker read last.
  void exchange_if_better(entry& e, unsigned lane_index) {
    lane& l = lanes_[std::min(lane_index, count_ - 1)];
    if (l.size.load(std::memory_order_relaxed) == 0 || e.priority > l.best.load(std::memory_order_relaxed)) return;
    l.m.lock();
    if (!l.heap.empty() && before(e, l.heap.front())) {
      std::pop_heap(l.heap.begin(), l.heap.end(), order{});
      std::swap(e, l.heap.back());
      std::push_heap(l.heap.begin(), l.heap.end(), order{});
      l.published(l.heap);
    }
    l.m.unlock();
  }

  // The best entry of lane `lane_index`, else of the lane with the best first entry, into `e`;
  // false when every lane was seen empty. A pop that races another one for an entry looks again.
  bool try_pop_best(unsigned lane_index, entry& e) {
    if (try_pop(std::min(lane_index, count_ - 1), e)) return true;
    for (;;) {
      unsigned best = count_;
      double best_priority = 0;
      for (unsigned i = 0; i < count_; ++i) {
        lane& l = lanes_[i];
        if (l.size.load(std::memory_order_relaxed) == 0) continue;
        l.m.lock();
        const bool better = !l.heap.empty() && (best == count_ || l.heap.front().priority > best_priority);
        if (better) best_priority = l.heap.front().priority;
        l.m.unlock();
        if (better) best = i;
      }
      if (best == count_) return false;
      if (try_pop(best, e)) return true;
      heddle::core_detail::cpu_relax();
    }
  }

  // Whether every lane is empty, as their sizes read now (relaxed: the caller orders the reads).
  bool looks_empty() const noexcept {
    for (unsigned i = 0; i < count_; ++i)
      if (lanes_[i].size.load(std::memory_order_relaxed) != 0) return false;
    return true;
  }

 private:
  struct alignas(64) lane {
    // A spin lock: the critical sections are a few hundred nanoseconds, and a mutex that sleeps in
    // the kernel when contended cost more in system calls than the modules' own work at small
    // times. A holder that was preempted is given the core now and then (spin_pause).
    heddle::core_detail::spin_lock m;
    std::atomic<std::size_t> size{0};
    std::atomic<double> best{0};  // the first entry's priority, while size is not 0
    std::vector<entry> heap;
    // Under m, after a change of heap: what the lock-free reads see.
    void published(const std::vector<entry>& h) noexcept {
      size.store(h.size(), std::memory_order_relaxed);
      if (!h.empty()) best.store(h.front().priority, std::memory_order_relaxed);
    }
  };
  // before() as the heap algorithms' comparator: a type, which they inline (a function pointer they
  // called, about 50 instructions a module).
  struct order {
    bool operator()(const entry& a, const entry& b) const noexcept { return before(a, b); }
  };

  bool try_pop(unsigned i, entry& e) {
    lane& l = lanes_[i];
    if (l.size.load(std::memory_order_relaxed) == 0) return false;
    l.m.lock();
    const bool found = !l.heap.empty();
    if (found) {
      std::pop_heap(l.heap.begin(), l.heap.end(), order{});
      e = l.heap.back();
      l.heap.pop_back();
      l.published(l.heap);
    }
    l.m.unlock();
    return found;
  }

  std::unique_ptr<lane[]> lanes_;
  unsigned count_;
};

}  // namespace heddle::fw_detail
