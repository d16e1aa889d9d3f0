// SPDX-License-Identifier: Apache-2.0
// The process-wide depot behind the workers' block caches (include/heddle/core/detail/block_cache.hpp):
// per size class, a stack of full magazines, a loose list (blocks returned one by one, or by a cache
// that is not full), and the slab that new blocks are carved from. One mutex per class: it is taken
// once per magazine_blocks operations of a cache, a worker's or an outside thread's (outside_cache,
// below), or once per operation of a thread whose cache is already gone.
#include <mutex>
#include <new>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/block_cache.hpp"

namespace heddle::core_detail {

namespace {

constexpr std::size_t slab_bytes = 64 * 1024;
// carve() finds a slab used up when its next block is exactly its end.
static_assert(slab_bytes % class_bytes(num_size_classes - 1) == 0, "a slab holds whole blocks of every class");

struct class_depot {
  std::mutex mutex;
  free_block* full = nullptr;  // magazines of magazine_blocks blocks, linked by next_magazine
  block_list loose;            // fewer than magazine_blocks blocks
  char* slab_next = nullptr;   // the uncarved rest of the newest slab
  char* slab_end = nullptr;
  std::size_t slabs = 0;  // slab_bytes each, never freed

  // A magazine of new blocks from the slab; a new slab when this one is used up. Caller holds mutex.
  block_list carve(std::size_t cls) {
    const std::size_t bytes = class_bytes(cls);
    block_list l;
    while (l.count < magazine_blocks) {
      if (slab_next == slab_end) {
        // Slabs are never freed: a record may be released after every runtime and static object
        // is gone. The depot lives forever too (below), so they stay reachable for leak checkers.
        slab_next = static_cast<char*>(::operator new (slab_bytes, std::align_val_t{block_align}));
        slab_end = slab_next + slab_bytes;
        ++slabs;
      }
      HEDDLE_ASSERT(slab_next + bytes <= slab_end, "a block carved past its slab's end");
      l.head = new (slab_next) free_block{l.head, nullptr, 0};
      poison_free_block(slab_next, cls);
      slab_next += bytes;
      ++l.count;
    }
    return l;
  }

  // Pushes one free block onto the loose list; a loose list that fills up becomes a magazine, so
  // blocks freed outside the runtime go back to the workers. Caller holds mutex.
  void push_loose(free_block* b) noexcept {
    b->next = loose.head;
    loose.head = b;
    HEDDLE_ASSERT(loose.count < magazine_blocks, "a loose list as long as a magazine was not made one");
    if (++loose.count == magazine_blocks) {
      push_full(loose);
      loose = {};
    }
  }
  void push_full(block_list l) noexcept {
    HEDDLE_ASSERT(l.head && l.count == magazine_blocks, "the depot's stack holds full magazines only");
    l.head->next_magazine = full;
    l.head->count = l.count;
    full = l.head;
  }
};

// Never destroyed: task records may be freed during or after static destruction.
class_depot* depots() {
  static class_depot* d = new class_depot[num_size_classes];
  return d;
}

}  // namespace

block_list depot_take(std::size_t cls) {
  class_depot& d = depots()[cls];
  std::lock_guard lock(d.mutex);
  if (free_block* m = d.full) {
    HEDDLE_ASSERT(m->count == magazine_blocks, "a magazine on the depot's stack is not full");
    d.full = m->next_magazine;
    return {m, m->count};
  }
  return d.carve(cls);
}

void depot_give(std::size_t cls, block_list l) noexcept {
  class_depot& d = depots()[cls];
  std::lock_guard lock(d.mutex);
  d.push_full(l);
}

void depot_return(std::size_t cls, block_list l) noexcept {
  if (l.count == 0) return;
  class_depot& d = depots()[cls];
  std::lock_guard lock(d.mutex);
  for (free_block* b = l.head; b;) {
    free_block* next = b->next;
    d.push_loose(b);
    b = next;
  }
}

void* depot_allocate_one(std::size_t cls) {
  class_depot& d = depots()[cls];
  std::lock_guard lock(d.mutex);
  if (!d.loose.head) {
    if (free_block* m = d.full) {
      d.full = m->next_magazine;
      d.loose = {m, m->count};
    } else {
      d.loose = d.carve(cls);
    }
  }
  free_block* b = d.loose.head;
  HEDDLE_ASSERT(b && d.loose.count > 0, "the loose list is empty after its refill");
  d.loose.head = b->next;
  --d.loose.count;
  unpoison_block(b, cls);
  return b;
}

void depot_free_one(std::size_t cls, void* p) noexcept {
  class_depot& d = depots()[cls];
  auto* b = new (p) free_block{nullptr, nullptr, 0};
  poison_free_block(p, cls);
  std::lock_guard lock(d.mutex);
  d.push_loose(b);
}

namespace {
// The state of the calling thread's outside cache. Plain thread-locals (no destructor): readable at
// any point of the thread's life, even after the cache itself is gone.
enum class cache_state : unsigned char { none, alive, gone };
thread_local cache_state outside_state = cache_state::none;
thread_local block_cache* outside = nullptr;

struct outside_cache_owner {
  block_cache cache;  // its destructor returns the blocks to the depot
  outside_cache_owner() noexcept {
    outside = &cache;
    outside_state = cache_state::alive;
  }
  ~outside_cache_owner() {
    outside = nullptr;
    outside_state = cache_state::gone;
  }
};
}  // namespace

block_cache* outside_cache() noexcept {
  if (outside_state == cache_state::alive) [[likely]]
    return outside;
  if (outside_state == cache_state::gone) return nullptr;
  static thread_local outside_cache_owner owner;
  return outside;
}

std::size_t depot_slabs() noexcept {
  std::size_t n = 0;
  for (std::size_t c = 0; c < num_size_classes; ++c) {
    class_depot& d = depots()[c];
    std::lock_guard lock(d.mutex);
    n += d.slabs;
  }
  return n;
}

}  // namespace heddle::core_detail
