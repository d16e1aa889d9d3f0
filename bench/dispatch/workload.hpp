// SPDX-License-Identifier: Apache-2.0
// The dispatch suite: heddle's serial queue against the locks and the serial flow-graph node that a
// program would otherwise use, and what groups and idle queues cost. One file per runtime:
// heddle.cpp (serial_queue, group), mutex.cpp (std::mutex), atomic.cpp (a bare atomic counter, the
// floor under a group's enter/leave), tbb.cpp (oneTBB spin_mutex, queuing_mutex, function_node).
//
//   lock        P producers (P = the thread count) run N critical sections on one shared state, N/P each:
//               through q.async (q.sync once at the end: the time runs until the queue has drained),
//               through q.sync, under a std::mutex (in std::threads, and in heddle tasks), a
//               tbb::spin_mutex or tbb::queuing_mutex (oneTBB tasks), or as messages to a oneTBB
//               function_node of concurrency 1, policy queueing_lightweight (try_put from oneTBB
//               tasks, then wait_for_all).
//               Every variant runs the same critical_section(); the result is checked exactly.
//   throughput  n trivial items through one queue: from one heddle task (the other workers free to
//               drain), from P heddle tasks, from a thread outside the runtime; the function_node from
//               one and from P oneTBB tasks.
//   group       enter()+leave() pairs on one thread (the count back at zero after each pair, or kept
//               above zero by an outer enter), and from P threads at once; a bare atomic add/sub pair
//               as the floor.
//   idle queues n heddle::serial_queue in a std::vector (label "q<i>", or none): heap (mallinfo2) and
//               RSS growth per queue, the 8-byte handle included; oneTBB function_node(serial) beside.
#pragma once

#include <heddle/core/runtime.hpp>
#include <tbb/task_arena.h>

#include <cstdint>
#include <string>

namespace heddle::bench::dispatch {

// What every lock variant's critical section updates: two cache lines that move with the lock.
struct alignas(64) shared_state {
  std::uint64_t counter = 0;    // how many critical sections ran
  std::uint64_t mixsum = 0;     // Σ fmix64(counter value): each value 1..n exactly once, whatever the order
  std::uint64_t slots[8] = {};  // Σ over slots = Σ items
};

// MurmurHash3's 64-bit finaliser: two multiplies and three shifts, a few ns of dependent work.
inline std::uint64_t fmix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// The critical section, the same in every variant. A lost or doubled update changes the counter, a
// duplicated counter value changes mixsum, a torn slot update changes the slot sum.
inline void critical_section(shared_state& s, std::uint64_t item) noexcept {
  const std::uint64_t c = ++s.counter;
  s.mixsum += fmix64(c);
  s.slots[c & 7] += item;
}

// n critical sections in all, items 0 .. n-1, split evenly among the producers: the work stays the
// same at every thread count.
struct lock_params {
  unsigned producers = 2;
  std::uint64_t n = 0;
  std::uint64_t from(unsigned k) const { return n * k / producers; }  // producer k: [from(k), from(k + 1))
};

// Σ_{c=1..n} fmix64(c): what mixsum must be after n critical sections.
std::uint64_t expected_mixsum(std::uint64_t n);
// Throws std::runtime_error naming `who` unless `s` is the state after n critical sections.
void check_state(const shared_state& s, std::uint64_t n, std::uint64_t mixsum, const std::string& who);

// ---- lock: each returns the seconds from the first producer's start until every critical section ran.
double lock_serialq_async(heddle::runtime& rt, const lock_params& p, shared_state& s);
double lock_serialq_sync(heddle::runtime& rt, const lock_params& p, shared_state& s);
double lock_mutex_threads(const lock_params& p, shared_state& s);
double lock_mutex_heddle(heddle::runtime& rt, const lock_params& p, shared_state& s);
double lock_tbb_spin_mutex(tbb::task_arena& arena, const lock_params& p, shared_state& s);
double lock_tbb_queuing_mutex(tbb::task_arena& arena, const lock_params& p, shared_state& s);
double lock_tbb_function_node(tbb::task_arena& arena, const lock_params& p, shared_state& s);

// ---- throughput: n items that each increment a plain counter; returns seconds, sets `ran`.
enum class producer_kind { one_task, all_workers, outside };
double through_serialq(heddle::runtime& rt, producer_kind who, std::uint64_t n, std::uint64_t& ran);
double through_tbb_function_node(tbb::task_arena& arena, unsigned producers, std::uint64_t n, std::uint64_t& ran);

// ---- group: seconds for n enter+leave pairs (per thread when contended); throws if the group
// does not end at zero or a notification misbehaves.
enum class group_mode { back_to_zero, above_zero };
double group_pairs(group_mode mode, std::uint64_t n);
double group_pairs_contended(unsigned threads, std::uint64_t n_per_thread);
double atomic_pairs(std::uint64_t n);
double atomic_pairs_contended(unsigned threads, std::uint64_t n_per_thread);

// ---- idle queues
struct memory_run {
  std::uint64_t n = 0;
  double seconds = 0;     // making the n queues (or nodes)
  double heap_bytes = 0;  // mallinfo2 (uordblks + hblkhd) growth, the vector of handles included
  double rss_bytes = 0;   // /proc/self/statm resident growth
};
memory_run idle_serial_queues(heddle::runtime& rt, std::uint64_t n, bool labelled);
memory_run idle_tbb_function_nodes(tbb::task_arena& arena, std::uint64_t n);

// Memory probes (workload.cpp), and malloc_trim(0) so that RSS can grow again in a later run.
double heap_bytes();
double rss_bytes();
void trim_heap();

}  // namespace heddle::bench::dispatch
