// One event in flight: per module a state word and a result, two bits per edge, and per path its
// decision. One allocation, reused for the next event; for the high-pileup configuration (489
// modules, 1,760 edges) it is about 6 KB, so 100,000 events in flight fit in well under 1 GiB.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "graph.hpp"

namespace heddle::fw::detail {

struct event_state {
  // A module's state word: `requested` once something asked for it; below it, how many of its
  // producers are not done yet, plus one while its request is being set up.
  static constexpr std::uint32_t requested = 1u << 31;
  static constexpr std::uint32_t pending_mask = requested - 1;

  std::uint64_t number = 0;
  std::uint32_t run = 0;
  std::atomic<std::uint32_t> paths_left{0};
  std::atomic<std::uint32_t> outputs_left{0};
  // One for the event itself until its end paths are done, and one per module from its
  // scheduling to the end of its completion: a module still telling its consumers keeps the
  // event (and so its slot) from being reused under it.
  std::atomic<std::uint32_t> active{0};
  std::atomic<std::uint32_t>* state;   // [modules]
  std::int64_t* result;                // [modules]
  std::atomic<std::uint64_t>* edges;   // [edge words]: bit 2k waiting, bit 2k+1 done, for edge 32w+k
  std::uint8_t* passed;                // [paths]
  std::int64_t* started_ns;            // [modules], only when a timeline is recorded

  static std::size_t edge_words(const graph& g) noexcept { return (std::size_t{g.num_edges} + 31) / 32; }

  static event_state* make(const graph& g, bool timed) {
    const std::size_t n = g.size(), words = edge_words(g);
    const std::size_t bytes = sizeof(event_state) + n * sizeof(std::int64_t) * (timed ? 2 : 1) +
                              words * sizeof(std::uint64_t) + n * sizeof(std::uint32_t) + g.paths.size();
    void* mem = std::malloc(bytes);
    if (!mem) throw std::bad_alloc();
    auto* e = ::new (mem) event_state;
    auto* p = reinterpret_cast<unsigned char*>(e + 1);
    e->result = reinterpret_cast<std::int64_t*>(p);
    p += n * sizeof(std::int64_t);
    e->started_ns = timed ? reinterpret_cast<std::int64_t*>(p) : nullptr;
    if (timed) p += n * sizeof(std::int64_t);
    e->edges = reinterpret_cast<std::atomic<std::uint64_t>*>(p);
    p += words * sizeof(std::uint64_t);
    e->state = reinterpret_cast<std::atomic<std::uint32_t>*>(p);
    p += n * sizeof(std::uint32_t);
    e->passed = p;
    for (std::size_t i = 0; i < words; ++i) ::new (&e->edges[i]) std::atomic<std::uint64_t>(0);
    for (std::size_t i = 0; i < n; ++i) ::new (&e->state[i]) std::atomic<std::uint32_t>(0);
    return e;
  }
  static void destroy(event_state* e) noexcept {
    e->~event_state();
    std::free(e);
  }

  // Ready for event `number`. Nothing else touches it now: relaxed stores, published by the
  // scheduling of the event's first tasks.
  void reset(const graph& g, std::uint64_t event, std::uint32_t in_run) noexcept {
    number = event;
    run = in_run;
    for (std::size_t i = 0, w = edge_words(g); i < w; ++i) edges[i].store(0, std::memory_order_relaxed);
    for (std::size_t i = 0; i < g.size(); ++i) state[i].store(0, std::memory_order_relaxed);
    std::memset(passed, 0, g.paths.size());
  }
};

}  // namespace heddle::fw::detail
