// SPDX-License-Identifier: Apache-2.0
// A record of every module execution of a run: which module, which event, and when it started and
// ended (steady clock). For an ExternalWork module one entry spans acquire() to the end of
// produce(). heddle-fw writes it with --timeline; tests check thread-safety levels against it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "heddle/core/export.hpp"

namespace heddle::fw {

struct timeline_entry {
  std::uint32_t module;  // index in the process (declaration order)
  std::uint64_t event;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

// Thread-safe: every call takes the timeline's lock.
class HEDDLE_EXPORT timeline {
 public:
  // Adds an entry. Thread-safe: the processors call it from their threads as modules finish; a
  // short lock.
  void record(const timeline_entry& e) {
    std::lock_guard lock(m_);
    entries_.push_back(e);
  }
  // Every entry so far, by start time: a copy, taken under the lock. Thread-safe.
  std::vector<timeline_entry> entries() const;
  // Forgets every entry. Thread-safe; meant for between runs (during one it drops what the run
  // recorded so far).
  void clear() {
    std::lock_guard lock(m_);
    entries_.clear();
  }

 private:
  mutable std::mutex m_;
  std::vector<timeline_entry> entries_;
};

}  // namespace heddle::fw
