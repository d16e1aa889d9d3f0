// SPDX-License-Identifier: Apache-2.0
// The slow paths of the item arena (heddle/dispatch/detail/item_arena.hpp): a new chunk for the
// calling thread, the retirement of the old one, and the pool of chunks whose records are all gone.
#include "heddle/dispatch/detail/item_arena.hpp"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace heddle::dispatch_detail {

HEDDLE_FAST_TLS_DEFINITION(item_arena, this_thread_items);

namespace {

// Chunks with no live record, ready for any thread. Never destroyed: threads may still retire
// chunks while the process exits.
struct chunk_pool {
  std::mutex m;
  std::vector<item_chunk*> free;
};
chunk_pool& pool() {
  static chunk_pool* p = new chunk_pool;
  return *p;
}

item_chunk* new_chunk(std::size_t bytes) {
  void* p = std::aligned_alloc(item_chunk_bytes, bytes);
  if (!p) throw std::bad_alloc();
  return ::new (p) item_chunk;
}

// Gives up the thread's open chunk: from now on its last free returns it to the pool.
void retire(item_arena& a) noexcept {
  item_chunk* c = std::exchange(a.chunk, nullptr);
  a.pos = a.end = nullptr;
  if (!c) return;
  const std::int64_t unused = open_bias - std::exchange(a.handed, 0);
  if (c->live.fetch_sub(unused, std::memory_order_acq_rel) == unused) release_item_chunk(c);
}

// Retires the thread's chunk when the thread ends.
struct retire_at_exit {
  ~retire_at_exit() { retire(this_thread_items); }
};
thread_local retire_at_exit thread_guard;

}  // namespace

void release_item_chunk(item_chunk* c) noexcept {
  if (c->oversized) {
    c->~item_chunk();
    std::free(c);
    return;
  }
  chunk_pool& p = pool();
  std::lock_guard lock(p.m);
  try {
    p.free.push_back(c);
  } catch (...) {
    c->~item_chunk();
    std::free(c);  // no room to keep it: give it back
  }
}

void* allocate_item_slow(std::size_t bytes) {
  constexpr std::size_t header = sizeof(item_chunk);
  if (bytes > item_chunk_bytes / 8) {
    // A large record gets a chunk of its own.
    const std::size_t total = (header + bytes + item_chunk_bytes - 1) & ~(item_chunk_bytes - 1);
    item_chunk* c = new_chunk(total);
    c->oversized = true;
    c->live.store(1, std::memory_order_relaxed);
    return reinterpret_cast<char*>(c) + header;
  }
  item_arena& a = this_thread_items;
  (void)&thread_guard;  // odr-use: the thread retires its chunk when it ends
  item_chunk* c = nullptr;
  {
    chunk_pool& p = pool();
    std::lock_guard lock(p.m);
    if (!p.free.empty()) {
      c = p.free.back();
      p.free.pop_back();
    }
  }
  if (!c) c = new_chunk(item_chunk_bytes);
  c->live.store(open_bias, std::memory_order_relaxed);
  retire(a);
  a.chunk = c;
  a.pos = reinterpret_cast<char*>(c) + header;
  a.end = reinterpret_cast<char*>(c) + item_chunk_bytes;
  a.handed = 1;
  void* p = a.pos;
  a.pos += bytes;
  return p;
}

}  // namespace heddle::dispatch_detail
