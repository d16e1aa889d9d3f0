// SPDX-License-Identifier: Apache-2.0
// Where queue items live: per-thread chunks of 64 KiB, handed out in address order. A queue's drain
// then reads each producer's records one after another, and the hardware streams them in. (From
// the core's block cache, whose free lists earlier frees reorder, a long-running process came to
// miss the cache on every record: 28 M items/s through a contended queue fell to 8 M in seven
// rounds of 2,000,000; docs/benchmarks.md.) A chunk goes back to a process-wide pool, whole, once
// its thread has moved on to another and every record in it was freed; chunks are never returned
// to the system, like the core's slabs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "heddle/core/export.hpp"

namespace heddle::dispatch_detail {

inline constexpr std::size_t item_chunk_bytes = std::size_t{64} << 10;
inline constexpr std::size_t item_align = 64;  // records never share a cache line

struct alignas(item_align) item_chunk {
  // Records not yet freed, plus open_bias while a thread still allocates from the chunk.
  std::atomic<std::int64_t> live{0};
  bool oversized = false;  // one record too large for a shared chunk: freed, not pooled
};
inline constexpr std::int64_t open_bias = std::int64_t{1} << 40;

// The calling thread's open chunk. Trivially destructible, so that reaching it costs no TLS
// wrapper call; the slow path registers the thread's retirement once.
struct item_arena {
  item_chunk* chunk;
  char* pos;
  char* end;
  std::int64_t handed;  // records handed out from `chunk`
};
HEDDLE_FAST_TLS(item_arena, this_thread_items);  // src/dispatch/item_arena.cpp

HEDDLE_EXPORT void* allocate_item_slow(std::size_t bytes);
HEDDLE_EXPORT void release_item_chunk(item_chunk* c) noexcept;

inline void* allocate_item(std::size_t bytes) {
  bytes = (bytes + item_align - 1) & ~(item_align - 1);
  item_arena& a = this_thread_items;
  if (static_cast<std::size_t>(a.end - a.pos) >= bytes) [[likely]] {
    void* p = a.pos;
    a.pos += bytes;
    ++a.handed;
    return p;
  }
  return allocate_item_slow(bytes);
}

inline void free_item(void* p) noexcept {
  auto* c = reinterpret_cast<item_chunk*>(reinterpret_cast<std::uintptr_t>(p) & ~(item_chunk_bytes - 1));
  if (c->live.fetch_sub(1, std::memory_order_acq_rel) == 1) release_item_chunk(c);
}

template <class T, class... A>
T* make_item(A&&... a) {
  static_assert(alignof(T) <= item_align);
  void* p = allocate_item(sizeof(T));
  try {
    return ::new (p) T(std::forward<A>(a)...);
  } catch (...) {
    free_item(p);
    throw;
  }
}

template <class T>
void destroy_item(T* p) noexcept {
  p->~T();
  free_item(p);
}

}  // namespace heddle::dispatch_detail
