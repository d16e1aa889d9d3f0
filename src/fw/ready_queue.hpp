// The threaded processor's ready list for reentrant modules: the ready module with the longest
// chain of work still behind it runs first (ties: the older event). With few events in flight this
// is what lets a handful of threads follow an event's critical path instead of whatever was made
// ready last; with many, it still finishes old events before it starts on new ones' long chains.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

namespace heddle::fw::detail {

struct event_state;

class ready_queue {
 public:
  struct entry {
    double priority;  // the remaining chain of work, in seconds
    std::uint64_t event;
    event_state* state;
    std::uint32_t module;
  };

  void push(const entry& e) {
    std::lock_guard lock(m_);
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), before);
  }
  // The first entry; the caller pushed at least as many as it pops.
  entry pop() {
    std::lock_guard lock(m_);
    std::pop_heap(heap_.begin(), heap_.end(), before);
    entry e = heap_.back();
    heap_.pop_back();
    return e;
  }

 private:
  // Heap order: "a runs after b".
  static bool before(const entry& a, const entry& b) noexcept {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.event > b.event;
  }
  std::mutex m_;
  std::vector<entry> heap_;
};

}  // namespace heddle::fw::detail
