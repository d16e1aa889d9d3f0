// SPDX-License-Identifier: Apache-2.0
// Chase–Lev work-stealing deque after Lê, Pop, Cohen and Zappa Nardelli, "Correct and efficient
// work-stealing for weak memory models" (PPoPP 2013), growing on demand. The owner pushes and pops
// at the bottom; thieves take from the top.
//
// Memory orders: the paper's, except that the two seq_cst fences (pop: between the bottom store and
// the top load; steal: between the top load and the bottom load) are expressed as seq_cst accesses of
// those same variables. That is the same total-order argument, and on x86 the same code (the pop's
// store becomes one XCHG, the fence's LOCK OR goes away), but ThreadSanitizer, which ignores fences,
// can follow it.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/task_record.hpp"

namespace heddle::core_detail {

class work_stealing_deque {
 public:
  explicit work_stealing_deque(std::size_t log2_capacity = 10) : array_(new ring(log2_capacity)) {}
  ~work_stealing_deque() { delete array_.load(std::memory_order_relaxed); }
  work_stealing_deque(const work_stealing_deque&) = delete;
  work_stealing_deque& operator=(const work_stealing_deque&) = delete;

  // Owner only.
  void push(task_base* t) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t top = top_.load(std::memory_order_acquire);
    HEDDLE_ASSERT(t != nullptr, "the deque holds task records, never null (null is pop's 'empty')");
    // Thieves move top up to bottom at most, and only the owner moves bottom.
    HEDDLE_ASSERT(top <= b, "the deque's top passed its bottom outside a pop");
    ring* a = array_.load(std::memory_order_relaxed);
    if (b - top > static_cast<std::int64_t>(a->mask)) [[unlikely]]
      a = grow(a, top, b);
    HEDDLE_ASSERT(b - top <= static_cast<std::int64_t>(a->mask), "a push into a full ring (grow did not make room)");
    a->put(b, t);
    // Release (rather than the paper's fence + relaxed store) so that ThreadSanitizer sees the
    // hand-off of the record's contents to a thief; on x86 both are a plain store.
    bottom_.store(b + 1, std::memory_order_release);
  }

  // How the owner's pops of a last element went against the thieves (tests count them).
  struct last_element_tally {
    std::uint64_t won = 0;   // the owner's CAS took it
    std::uint64_t lost = 0;  // a thief's CAS took it first
  };

  // Owner only. Returns nullptr when empty. With a tally, also counts the last-element races; the
  // schedulers' calls pass none, and the inlined null check folds away.
  task_base* pop(last_element_tally* tally = nullptr) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* a = array_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {  // empty
      // Top never passes the bottom the owner had before this pop.
      HEDDLE_ASSERT(t == b + 1, "the deque's top passed its bottom by more than a pop's decrement");
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    task_base* x = a->get(b);
    HEDDLE_ASSERT(x != nullptr, "an occupied slot of the deque (top <= index < bottom) holds no record");
    if (t == b) {  // the last element: race a thief for it
      const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      if (!won) x = nullptr;
      if (tally) ++(won ? tally->won : tally->lost);
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return x;
  }

  enum class steal_result { success, empty, contended };

  // Any thread.
  steal_result steal(task_base*& out) {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return steal_result::empty;
    ring* a = array_.load(std::memory_order_acquire);
    task_base* x = a->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return steal_result::contended;
    // The CAS won slot t while it was below bottom: the record the owner put there, in this ring
    // or in a retired one (kept alive for this read).
    HEDDLE_ASSERT(x != nullptr, "a stolen slot of the deque held no record");
    out = x;
    return steal_result::success;
  }

  // A racy emptiness hint for idle scans; a wrong answer costs only a wasted or a late look.
  bool looks_empty() const noexcept {
    return top_.load(std::memory_order_relaxed) >= bottom_.load(std::memory_order_relaxed);
  }
  std::size_t size_hint() const noexcept {
    auto d = bottom_.load(std::memory_order_relaxed) - top_.load(std::memory_order_relaxed);
    return d > 0 ? static_cast<std::size_t>(d) : 0;
  }

 private:
  struct ring {
    explicit ring(std::size_t log2)
        : mask((std::size_t{1} << log2) - 1), slots(std::make_unique<std::atomic<task_base*>[]>(mask + 1)) {}
    std::size_t mask;
    std::unique_ptr<std::atomic<task_base*>[]> slots;
    task_base* get(std::int64_t i) const noexcept {
      return slots[static_cast<std::size_t>(i) & mask].load(std::memory_order_relaxed);
    }
    void put(std::int64_t i, task_base* t) noexcept {
      slots[static_cast<std::size_t>(i) & mask].store(t, std::memory_order_relaxed);
    }
  };

  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    HEDDLE_ASSERT(b - t == static_cast<std::int64_t>(old->mask) + 1, "the deque grows only when its ring is full");
    auto* bigger = new ring(std::bit_width(old->mask + 1));
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    array_.store(bigger, std::memory_order_release);
    // A thief may still be reading the old ring; it is kept until the deque dies (at most as much
    // memory again as the largest ring).
    retired_.emplace_back(old);
    return bigger;
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> array_;
  std::vector<std::unique_ptr<ring>> retired_;
};

}  // namespace heddle::core_detail
