// The calls waiting for their replies, by call id. A call id's low bits pick a slot in a flat
// array, so that the common case (fewer calls in flight than slots) costs no allocation and no
// hashing; a call whose slot is taken waits in an overflow map. One spin lock guards both: the critical
// sections are a few loads and stores.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "heddle/am/detail/calls.hpp"
#include "heddle/core/detail/spin_wait.hpp"

namespace heddle::offload::detail {

class pending_table {
 public:
  void insert(std::uint64_t id, node_id node, pending_call* p) {
    std::lock_guard g(lock_);
    slot& s = slots_[id % slots_.size()];
    if (!s.call) s = {id, node, p};
    else overflow_.emplace(id, slot{id, node, p});
  }

  // The call with this id, now the caller's; nullptr if there is none (a reply to a call that
  // already failed, or an id a peer made up).
  pending_call* take(std::uint64_t id) {
    std::lock_guard g(lock_);
    slot& s = slots_[id % slots_.size()];
    if (s.call && s.id == id) return std::exchange(s.call, nullptr);
    if (overflow_.empty()) return nullptr;
    auto it = overflow_.find(id);
    if (it == overflow_.end()) return nullptr;
    pending_call* p = it->second.call;
    overflow_.erase(it);
    return p;
  }

  // The call with this id to `node`, left in the table; nullptr if there is none.
  pending_call* find(std::uint64_t id, node_id node) {
    std::lock_guard g(lock_);
    const slot& s = slots_[id % slots_.size()];
    if (s.call && s.id == id) return s.node == node ? s.call : nullptr;
    auto it = overflow_.find(id);
    return it != overflow_.end() && it->second.node == node ? it->second.call : nullptr;
  }

  // Every call to `node` (every call when all), now the caller's.
  std::vector<pending_call*> take_all(node_id node, bool all) {
    std::vector<pending_call*> out;
    std::lock_guard g(lock_);
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
  alignas(64) heddle::core_detail::spin_lock lock_;
  std::array<slot, 1024> slots_{};
  std::unordered_map<std::uint64_t, slot> overflow_;
};

}  // namespace heddle::offload::detail
