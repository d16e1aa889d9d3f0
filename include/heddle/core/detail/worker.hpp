// SPDX-License-Identifier: Apache-2.0
// What task-creating code inlined into user programs needs to know about the calling worker:
// its deque, its block cache and whether anybody is asleep. The scheduling loop is in src/core.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "heddle/core/detail/block_cache.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/work_stealing_deque.hpp"
#include "heddle/core/export.hpp"

namespace heddle {
class runtime;
}

namespace heddle::core_detail {

class runtime_core;

// Written only by the owning worker, read by stats() from any thread: relaxed load+store, no RMW.
class counter {
 public:
  void bump() noexcept { v_.store(v_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

struct worker_counters {
  counter spawned, executed, steals, failed_steals, parks, isolation_requeues;
};

struct worker;

// The continuation a waiting worker attaches to a future: completion wakes the worker.
// `attached` counts the futures it is attached to whose completers have not finished the wake yet
// (nested waits attach it to several). A completer can be a thread the runtime does not own, still
// inside the wake after the waiter saw the completion and returned: the runtime frees its workers
// only once every count is back to zero (~runtime_core).
struct worker_wake_node : continuation {
  worker* owner = nullptr;
  std::atomic<std::uint32_t> attached{0};
};

struct worker {
  work_stealing_deque deque;
  block_cache cache;
  runtime_core* core = nullptr;
  const std::atomic<std::uint32_t>* sleepers = nullptr;  // how many workers of `core` are parked
  // How many tasks wait in `core`'s express lane (completions from engines and other threads): a
  // coroutine past a co_await of a future that is done already yields to them (coroutine.hpp).
  const std::atomic<std::size_t>* express_waiting = nullptr;
  // The isolation region (heddle::isolate) this worker is in: that of the task it runs, or the one
  // it entered. Written by this worker only; read by waiters of other workers (relaxed) to pick
  // victims that are likely to hold tasks of their region (src/core/waiting.cpp).
  std::atomic<std::uint32_t> isolation{0};
  unsigned index = 0;
  // The runtime whose worker this is: heddle::this_worker::runtime(), and runtime_core::owner(),
  // which reads it from its first worker (the one place a runtime's core keeps its owner).
  runtime* owner = nullptr;
  // Below this stack address the worker takes no unrelated work while it waits.
  std::uintptr_t stack_limit = 0;
  std::int64_t watch_timeout_ns = 1'000'000;            // see parking_lot: the timed sleep without the fence
  alignas(64) std::atomic<std::uint32_t> wake_word{0};  // the futex word this worker parks on
  worker_wake_node waiter;                              // attached to a future this worker sleeps on
  // The record of a spawned coroutine that the coroutine awaiting it popped from this deque and
  // runs here now (run_own_work_until_done): nobody else can see it, so its end completes it with a
  // plain store (complete_owned), as a future's owner that runs its own task does.
  const void* owned_run = nullptr;
  worker_counters stats;
};

// The worker running on this thread, or nullptr on threads the runtime does not own. One for every
// library and plugin (heddle/core/export.hpp; shared builds define it in src/core/runtime_core.cpp).
HEDDLE_FAST_TLS(worker*, current_worker);

HEDDLE_EXPORT void wake_one_sleeper(runtime_core* core) noexcept;

// Whether tasks wait in the express lane of `w`'s runtime (one relaxed load; racy by design: a look,
// not a promise).
inline bool express_waiting(const worker* w) noexcept {
  return w->express_waiting->load(std::memory_order_relaxed) != 0;
}

// Pushes a ready task onto the calling worker's own deque; wakes a parked worker if there is one.
// The sleeper check is a plain load after a compiler barrier: the light side of the asymmetric
// fence whose heavy side a worker falling asleep executes (src/core/asymmetric_fence.hpp), so that
// either this load sees the sleeper or the sleeper sees the pushed task.
// The record takes the worker's current isolation: one load and one store, in place of the zero
// the header would otherwise keep.
inline void spawn_local(worker* w, task_base* t) {
  t->isolation = w->isolation.load(std::memory_order_relaxed);
  w->deque.push(t);
  w->stats.spawned.bump();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (w->sleepers->load(std::memory_order_relaxed) != 0) [[unlikely]]
    wake_one_sleeper(w->core);
}

// Task records live in blocks (block_cache.hpp) when they fit one of the size classes: the calling
// worker's cache, or on threads outside the runtime their own (the depot while they end).
inline void* allocate_block(std::size_t cls) {
  if (worker* w = current_worker) [[likely]]
    return w->cache.allocate(cls);
  if (block_cache* c = outside_cache()) return c->allocate(cls);
  return depot_allocate_one(cls);
}
inline void deallocate_block(void* p, std::size_t cls) noexcept {
  if (worker* w = current_worker) [[likely]]
    return w->cache.deallocate(p, cls);
  if (block_cache* c = outside_cache()) return c->deallocate(p, cls);
  depot_free_one(cls, p);
}

template <class T>
void* allocate_record() {
  constexpr std::size_t cls = size_class_of(sizeof(T));
  if constexpr (cls < num_size_classes && alignof(T) <= block_align) {
    return allocate_block(cls);
  } else {
    return ::operator new (sizeof(T), std::align_val_t{std::max(alignof(T), block_align)});
  }
}

template <class T>
void deallocate_record(void* p) noexcept {
  constexpr std::size_t cls = size_class_of(sizeof(T));
  if constexpr (cls < num_size_classes && alignof(T) <= block_align) {
    deallocate_block(p, cls);
  } else {
    ::operator delete (p, std::align_val_t{std::max(alignof(T), block_align)});
  }
}

template <class T>
void free_record(T* p) noexcept {
  p->~T();
  deallocate_record<T>(p);
}

}  // namespace heddle::core_detail
