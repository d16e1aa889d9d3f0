// SPDX-License-Identifier: Apache-2.0
// The calls waiting for their replies, by call id. A call id's low bits pick one of 1,024 slots,
// which the caller claims, fills and publishes with atomics: neither the caller that inserts nor the
// polling thread that takes a reply takes a lock, and each touches the slot's cache line only (a lock
// would add a line that both sides write on every call). Ids never repeat (a 64-bit counter), so a
// slot's id names one call for good: whoever turns it back to 0 owns that call. A call whose slot is
// still busy (over 1,024 calls in flight, or one 1,024 ids older still waiting) waits in an overflow
// map under a mutex, which a counter lets the common path skip.
//
// Against a peer's loss: the caller inserts, then looks at the peer's lost flag; lost() sets the
// flag, then takes the peer's calls (take_all). Both may miss the other (no full fence on the call's
// path: it would cost more than the rest of the insertion); the engine's periodic look at its peers
// then takes what a lost peer still has here (engine::check_peers_if_due, twice after each loss). Whoever takes a call
// fails it, once.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "heddle/am/detail/calls.hpp"
#include "heddle/core/detail/assert.hpp"

namespace heddle::am_detail {

class pending_table {
 public:
  // Call `id` (never 0) to `node`, waiting for its reply. Costs a compare-and-swap and three stores;
  // a map insertion (and a heap allocation) when the slot is busy.
  void insert(std::uint64_t id, node_id node, pending_call* p) {
    HEDDLE_ASSERT(id != 0 && id != claiming, "a call id that marks a free or a claimed slot");
    HEDDLE_ASSERT(p != nullptr, "a pending call inserted without its call");
    slot& s = slots_[id % slot_count];
    std::uint64_t free = 0;
    if (s.id.load(std::memory_order_relaxed) == 0 &&
        s.id.compare_exchange_strong(free, claiming, std::memory_order_acquire, std::memory_order_relaxed)) [[likely]] {
      s.node.store(node, std::memory_order_relaxed);
      s.call.store(p, std::memory_order_relaxed);
      s.id.store(id, std::memory_order_release);  // publishes node and call
      return;
    }
    std::lock_guard g(overflow_m_);
    [[maybe_unused]] const bool inserted = overflow_.emplace(id, entry{node, p}).second;
    HEDDLE_ASSERT(inserted, "a call id inserted twice (ids never repeat)");
    overflow_count_.fetch_add(1, std::memory_order_release);
    HEDDLE_ASSERT(overflow_count_.load(std::memory_order_relaxed) == overflow_.size(),
                  "the overflow count differs from the map (both change under its mutex)");
  }

  // The call with this id to `from`, now the caller's; nullptr if there is none (a reply to a call
  // that already failed, an id a peer made up, or a reply from another node than the one called).
  pending_call* take(std::uint64_t id, node_id from) {
    if (pending_call* p = take_from_slot(id, from)) [[likely]]
      return p;
    return take_from_overflow(id, from);
  }
  // take's two halves, for a caller that keeps the first inline and calls the second out of line.
  pending_call* take_from_slot(std::uint64_t id, node_id from) {
    slot& s = slots_[id % slot_count];
    std::uint64_t current = s.id.load(std::memory_order_acquire);
    if (current != id || s.node.load(std::memory_order_relaxed) != from) return nullptr;
    pending_call* p = s.call.load(std::memory_order_relaxed);
    // Read before the slot is freed (then it may be claimed again); kept only if this frees it.
    return s.id.compare_exchange_strong(current, 0, std::memory_order_acq_rel, std::memory_order_relaxed) ? p : nullptr;
  }
  // (An id in its slot is never in the overflow map: this finds nothing for it.)
  pending_call* take_from_overflow(std::uint64_t id, node_id from) {
    if (overflow_count_.load(std::memory_order_acquire) == 0) return nullptr;
    return take_from_overflow_map(id, from);
  }

  // The call with this id to `node`, left in the table; nullptr if there is none.
  pending_call* find(std::uint64_t id, node_id node) {
    const slot& s = slots_[id % slot_count];
    if (s.id.load(std::memory_order_acquire) == id)
      return s.node.load(std::memory_order_relaxed) == node ? s.call.load(std::memory_order_relaxed) : nullptr;
    if (overflow_count_.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard g(overflow_m_);
    auto it = overflow_.find(id);
    return it != overflow_.end() && it->second.node == node ? it->second.call : nullptr;
  }

  // Every call to `node` (every call when all), now the caller's.
  std::vector<pending_call*> take_all(node_id node, bool all) {
    std::vector<pending_call*> out;
    for (slot& s : slots_) {
      std::uint64_t id = s.id.load(std::memory_order_acquire);
      if (id == 0 || id == claiming) continue;  // a call being inserted: the next sweep takes it
      if (!all && s.node.load(std::memory_order_relaxed) != node) continue;
      pending_call* p = s.call.load(std::memory_order_relaxed);
      if (s.id.compare_exchange_strong(id, 0, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        HEDDLE_ASSERT(p != nullptr, "a published slot holds no call");
        out.push_back(p);
      }
    }
    std::lock_guard g(overflow_m_);
    for (auto it = overflow_.begin(); it != overflow_.end();) {
      if (all || it->second.node == node) {
        out.push_back(it->second.call);
        it = overflow_.erase(it);
        overflow_count_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        ++it;
      }
    }
    HEDDLE_ASSERT(overflow_count_.load(std::memory_order_relaxed) == overflow_.size(),
                  "the overflow count differs from the map (both change under its mutex)");
    return out;
  }

 private:
  static constexpr std::size_t slot_count = 1024;
  static constexpr std::uint64_t claiming = ~std::uint64_t{0};  // a slot being filled; no call id reaches it
  struct alignas(32) slot {
    std::atomic<std::uint64_t> id{0};  // 0: free
    std::atomic<node_id> node{0};
    std::atomic<pending_call*> call{nullptr};
  };
  struct entry {
    node_id node;
    pending_call* call;
  };
  // Out of line: inlined, its lock would make take's callers save registers.
  [[gnu::noinline]] pending_call* take_from_overflow_map(std::uint64_t id, node_id from) {
    std::lock_guard g(overflow_m_);
    auto it = overflow_.find(id);
    if (it == overflow_.end() || it->second.node != from) return nullptr;
    pending_call* p = it->second.call;
    overflow_.erase(it);
    overflow_count_.fetch_sub(1, std::memory_order_relaxed);
    HEDDLE_ASSERT(overflow_count_.load(std::memory_order_relaxed) == overflow_.size(),
                  "the overflow count differs from the map (both change under its mutex)");
    return p;
  }

  slot slots_[slot_count];
  std::mutex overflow_m_;
  std::unordered_map<std::uint64_t, entry> overflow_;
  std::atomic<std::size_t> overflow_count_{0};
};

}  // namespace heddle::am_detail
