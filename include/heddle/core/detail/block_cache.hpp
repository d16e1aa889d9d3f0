// SPDX-License-Identifier: Apache-2.0
// Task records come from fixed-size blocks, so that spawning never calls malloc, not even when a
// task spawns a hundred thousand children in bulk before any of them runs.
//
// Two levels, as in Bonwick's magazine allocator:
// - each worker keeps, per size class, two magazines (intrusive free lists of at most
//   `magazine_blocks` blocks): allocation pops and freeing pushes, with no atomic operation;
// - a process-wide depot (src/core/block_depot.cpp) trades whole magazines under a lock, once per
//   `magazine_blocks` operations at most, and carves new blocks from 64 KiB slabs.
// A block freed by another worker than the one that allocated it simply joins that worker's
// magazines. Threads outside the runtime (a program's main thread submitting tasks and waiting on
// futures, a transport's receiver) have a cache of their own too, made on first use and returned to
// the depot when the thread ends; while it ends, they go through the depot one block at a time.
// Slabs are never returned to the system: the memory of the largest burst of live records stays
// ready for the next one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "heddle/core/detail/sanitizers.hpp"
#if HEDDLE_DETAIL_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/export.hpp"

namespace heddle::core_detail {

inline constexpr std::size_t block_align = 64;  // one cache line: records never share a line
inline constexpr std::size_t num_size_classes = 4;
inline constexpr std::uint32_t magazine_blocks = 128;

constexpr std::size_t size_class_of(std::size_t bytes) noexcept {
  return bytes <= 64 ? 0 : bytes <= 128 ? 1 : bytes <= 256 ? 2 : bytes <= 512 ? 3 : num_size_classes;
}
constexpr std::size_t class_bytes(std::size_t cls) noexcept { return std::size_t{64} << cls; }

// A free block: the link of its list, and for the first block of a magazine in the depot, the link
// to the next magazine and the number of blocks.
struct free_block {
  free_block* next;
  free_block* next_magazine;
  std::uint32_t count;
};

struct block_list {
  free_block* head = nullptr;
  std::uint32_t count = 0;
};

// The depot (src/core/block_depot.cpp). Thread-safe.
HEDDLE_EXPORT block_list depot_take(std::size_t cls);                       // a full magazine; throws std::bad_alloc
HEDDLE_EXPORT void depot_give(std::size_t cls, block_list full) noexcept;   // full: magazine_blocks blocks
HEDDLE_EXPORT void depot_return(std::size_t cls, block_list any) noexcept;  // any number of blocks
HEDDLE_EXPORT void* depot_allocate_one(std::size_t cls);                    // for threads outside the runtime
HEDDLE_EXPORT void depot_free_one(std::size_t cls, void* p) noexcept;       // whose own cache is gone (outside_cache)
HEDDLE_EXPORT std::size_t depot_slabs() noexcept;  // slabs carved so far, all classes: memory the records hold

// A freed block keeps its first bytes for the free list; AddressSanitizer builds poison the rest, so
// a use after free of a task record is still reported.
inline void poison_free_block([[maybe_unused]] void* p, [[maybe_unused]] std::size_t cls) noexcept {
#if HEDDLE_DETAIL_ASAN
  ASAN_POISON_MEMORY_REGION(static_cast<char*>(p) + sizeof(free_block), class_bytes(cls) - sizeof(free_block));
#endif
}
inline void unpoison_block([[maybe_unused]] void* p, [[maybe_unused]] std::size_t cls) noexcept {
#if HEDDLE_DETAIL_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, class_bytes(cls));
#endif
}

// One worker's magazines. Owned and used by one thread only.
class block_cache {
 public:
  block_cache() = default;
  block_cache(const block_cache&) = delete;
  block_cache& operator=(const block_cache&) = delete;
  ~block_cache() {
    for (std::size_t c = 0; c < num_size_classes; ++c) {
      depot_return(c, loaded_[c]);
      depot_return(c, previous_[c]);
    }
  }

  void* allocate(std::size_t cls) {
    HEDDLE_ASSERT(cls < num_size_classes, "a block of no size class");
    block_list& l = loaded_[cls];
    if (free_block* b = l.head) [[likely]] {
      HEDDLE_ASSERT(l.count > 0, "a magazine's count says empty while its list holds a block");
      l.head = b->next;
      --l.count;
      unpoison_block(b, cls);
      return b;
    }
    return refill_and_allocate(cls);
  }

  void deallocate(void* p, std::size_t cls) noexcept {
    HEDDLE_ASSERT(cls < num_size_classes && p != nullptr, "a block of no size class, or none, freed");
    block_list& l = loaded_[cls];
    if (l.count < magazine_blocks) [[likely]] {
      // Only the link: a magazine's count and next magazine are its head's, written by the depot
      // when it takes the magazine (depot_give), not at each free.
      auto* b = ::new (p) free_block;
      b->next = l.head;
      l.head = b;
      ++l.count;
      poison_free_block(p, cls);
      return;
    }
    spill_and_deallocate(p, cls);
  }

 private:
  // The loaded magazine is empty: the previous one if it has blocks, else a full one from the depot.
  [[gnu::noinline]] void* refill_and_allocate(std::size_t cls) {
    if (previous_[cls].count == 0) {
      previous_[cls] = depot_take(cls);  // the empty loaded magazine stays loaded until the swap below
    }
    std::swap(loaded_[cls], previous_[cls]);
    HEDDLE_ASSERT(loaded_[cls].count > 0 && loaded_[cls].head, "a refilled magazine is empty");
    return allocate(cls);
  }
  // The loaded magazine is full: swap with an empty previous one, or hand the previous (full) one
  // to the depot first. Either way at least magazine_blocks operations pass before the next trade.
  [[gnu::noinline]] void spill_and_deallocate(void* p, std::size_t cls) noexcept {
    HEDDLE_ASSERT(loaded_[cls].count == magazine_blocks, "a magazine spilled before it was full");
    if (previous_[cls].count != 0) depot_give(cls, previous_[cls]);
    previous_[cls] = loaded_[cls];
    loaded_[cls] = {};
    deallocate(p, cls);
  }

  block_list loaded_[num_size_classes];
  block_list previous_[num_size_classes];
};

// The calling thread's cache when it is not a worker: made on its first call, returned to the depot
// when the thread ends; nullptr from then on (thread-local destructors that still free records).
HEDDLE_EXPORT block_cache* outside_cache() noexcept;

}  // namespace heddle::core_detail
