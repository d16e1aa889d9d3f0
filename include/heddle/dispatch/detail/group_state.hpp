// SPDX-License-Identifier: Apache-2.0
// A group's state: one 64-bit word holds the count of pending work, a `waiters` bit, and a
// generation that every leave advances, all in the leave's single atomic add. A notification
// records the generation it was registered in; the leave that brings the count to zero then fires
// exactly those registered before it, even if the group was entered again in between.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/export.hpp"

namespace heddle::dispatch_detail {

struct group_node {
  group_node* next = nullptr;
  std::uint32_t gen = 0;
  void (*fire)(group_node*) noexcept;     // the count returned to zero: hand the work on, free the node
  void (*discard)(group_node*) noexcept;  // the group went away first: release everything, free it
};

struct group_state {
  static constexpr std::uint64_t waiters = 1;
  static constexpr std::uint64_t count_unit = 2;                     // bits 1..32
  static constexpr std::uint64_t gen_unit = std::uint64_t{1} << 33;  // bits 33..63
  static constexpr std::uint64_t count_mask = 0xffff'ffffull << 1;

  static std::uint64_t count(std::uint64_t w) noexcept { return (w & count_mask) >> 1; }
  static std::uint32_t gen(std::uint64_t w) noexcept { return static_cast<std::uint32_t>(w >> 33); }

  std::atomic<std::uint64_t> word{0};
  std::atomic<std::uint32_t> refs{1};
  std::mutex m;                   // guards the lists below and `firing`
  group_node* pending = nullptr;  // registered, in order, waiting for their zero
  group_node* pending_last = nullptr;
  group_node* ready = nullptr;  // due, in order, not yet fired
  group_node* ready_last = nullptr;
  bool firing = false;  // a thread is firing `ready` (outside the lock, in order)
};

inline void retain(group_state* g) noexcept { g->refs.fetch_add(1, std::memory_order_relaxed); }
HEDDLE_EXPORT void release(group_state* g) noexcept;

// Count is back at zero with waiters registered (src/dispatch/group.cpp).
HEDDLE_EXPORT void group_zero(group_state* g, std::uint64_t word_after) noexcept;
HEDDLE_EXPORT [[noreturn]] void group_unbalanced() noexcept;
// Registers `n` (fired at once, in order after the due ones, if the count is zero now).
HEDDLE_EXPORT void group_add_node(group_state* g, group_node* n) noexcept;

inline void group_enter(group_state* g) noexcept {
  [[maybe_unused]] const std::uint64_t old = g->word.fetch_add(group_state::count_unit, std::memory_order_relaxed);
  // The count's 32 bits full would carry into the generation.
  HEDDLE_ASSERT(group_state::count(old) != 0xffff'ffffull, "a group's count of pending work overflowed");
}

inline void group_leave(group_state* g) noexcept {
  const std::uint64_t old = g->word.fetch_add(group_state::gen_unit - group_state::count_unit,
                                              std::memory_order_acq_rel);
  const std::uint64_t n = group_state::count(old);
  if (n == 1) [[unlikely]] {
    if (old & group_state::waiters) group_zero(g, old + group_state::gen_unit - group_state::count_unit);
  } else if (n == 0) [[unlikely]] {
    group_unbalanced();
  }
}

// The epilogue of group.async's items: leave, then drop the item's reference.
struct group_leave_epilogue {
  group_state* g;
  explicit group_leave_epilogue(group_state* s) noexcept : g(s) {}
  group_leave_epilogue(group_leave_epilogue&& o) noexcept : g(o.g) { o.g = nullptr; }
  group_leave_epilogue& operator=(group_leave_epilogue&&) = delete;
  ~group_leave_epilogue() = default;
  void operator()() noexcept {
    if (group_state* s = g) {
      g = nullptr;
      group_leave(s);
      release(s);
    }
  }
};

}  // namespace heddle::dispatch_detail
