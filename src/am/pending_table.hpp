// The calls waiting for their replies, by call id. A call id's low bits pick a slot in a flat
// array, so that the common case (fewer calls in flight than slots) costs no allocation and no
// hashing; a call whose slot is taken waits in an overflow map. One short spin lock guards both:
// the critical sections are a few loads and stores.
#pragma once

#include <sched.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "heddle/am/detail/calls.hpp"
#include "heddle/core/detail/futex.hpp"

namespace heddle::offload::detail {

class pending_table {
 public:
  void insert(std::uint64_t id, node_id node, pending_call* p) {
    guard g(lock_);
    slot& s = slots_[id % slots_.size()];
    if (!s.call) s = {id, node, p};
    else overflow_.emplace(id, slot{id, node, p});
  }

  // The call with this id, now the caller's; nullptr if there is none (a reply to a call that
  // already failed, or an id a peer made up).
  pending_call* take(std::uint64_t id) {
    guard g(lock_);
    slot& s = slots_[id % slots_.size()];
    if (s.call && s.id == id) return std::exchange(s.call, nullptr);
    if (overflow_.empty()) return nullptr;
    auto it = overflow_.find(id);
    if (it == overflow_.end()) return nullptr;
    pending_call* p = it->second.call;
    overflow_.erase(it);
    return p;
  }

  // Every call to `node` (every call when all), now the caller's.
  std::vector<pending_call*> take_all(node_id node, bool all) {
    std::vector<pending_call*> out;
    guard g(lock_);
    for (slot& s : slots_)
      if (s.call && (all || s.node == node)) out.push_back(std::exchange(s.call, nullptr));
    for (auto it = overflow_.begin(); it != overflow_.end();) {
      if (all || it->second.node == node) {
        out.push_back(it->second.call);
        it = overflow_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }

 private:
  struct slot {
    std::uint64_t id = 0;
    node_id node = 0;
    pending_call* call = nullptr;
  };
  struct guard {
    std::atomic<bool>& l;
    explicit guard(std::atomic<bool>& x) noexcept : l(x) {
      for (unsigned n = 1; l.exchange(true, std::memory_order_acquire); ++n) {
        while (l.load(std::memory_order_relaxed)) {
          if ((++n & 127) == 0) ::sched_yield();  // the holder may be waiting for this core
          else heddle::detail::cpu_relax();
        }
      }
    }
    ~guard() { l.store(false, std::memory_order_release); }
  };

  alignas(64) std::atomic<bool> lock_{false};
  std::array<slot, 1024> slots_{};
  std::unordered_map<std::uint64_t, slot> overflow_;
};

}  // namespace heddle::offload::detail
