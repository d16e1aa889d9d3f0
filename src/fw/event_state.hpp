// SPDX-License-Identifier: Apache-2.0
// One event in flight: per module a 16-bit state word, per product an 8-byte slot (the product itself
// when small, else a pointer to it) and a made byte, per filter a decision bit, two bits per edge, and
// per path its decision. One allocation, reused for the next event; for the high-pileup
// configuration (489 modules, 1,760 edges) it is about 6 KB, so 100,000 events in flight fit in
// well under 1 GiB.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "graph.hpp"
#include "heddle/fw/event.hpp"

namespace heddle::fw_detail {

struct event_state {
  // A module's state word: `requested` once something asked for it; below it, how many of its
  // producers and conditions are not done yet, plus one while its request is being set up (or,
  // for ExternalWork, the two ends of its acquire). 16 bits: finalize() keeps every module's count
  // below pending_mask, and 100,000 events in flight of 491 modules save 98 MB against 32 bits.
  using word = std::uint16_t;
  static constexpr word requested = word{1} << 15;
  static constexpr word pending_mask = requested - 1;
  static_assert(max_waits + 3 <= pending_mask, "a module's waits fit its state word");

  event_id id;
  unsigned stream = 0;  // the slot's index: stream modules' instance
  std::atomic<std::uint32_t> paths_left{0};
  std::atomic<std::uint32_t> outputs_left{0};
  // One for the event itself until its end paths are done, and one per module from its
  // scheduling to the end of its completion: a module still telling its consumers keeps the
  // event (and so its slot) from being reused under it.
  std::atomic<std::uint32_t> active{0};
  std::atomic<word>* state;            // [modules]
  void** slots;                        // [products]: the product, or a pointer to it (product_ops)
  std::atomic<std::uint8_t>* made;     // [products]: set once made, by its module alone (a plain
                                       // store, where a shared bit would take a locked instruction)
  std::atomic<std::uint64_t>* passes;  // [module words]: bit m once filter m passed the event
  std::atomic<std::uint64_t>* edges;   // [edge words]: bit 2k waiting, bit 2k+1 done, for edge 32w+k
  std::uint8_t* passed;                // [paths]
  std::int64_t* started_ns;            // [modules], only when a timeline is recorded
  // Traced runs only (module_scheduler.cpp, threaded.cpp): per module, when it was asked for and when it was ready
  // (trace ticks; asked-for 0 if it had nothing to wait for); when the event started.
  std::uint64_t* trace_ticks = nullptr;  // [2 * modules]
  std::uint64_t trace_begin = 0;

  static std::size_t words(std::size_t bits) noexcept { return (bits + 63) / 64; }
  static std::size_t edge_words(const graph& g) noexcept { return (std::size_t{g.num_edges} + 31) / 32; }

  static event_state* make(const graph& g, unsigned stream, bool timed, bool traced = false) {
    const std::size_t n = g.size(), np = g.products.size(), e = edge_words(g), mw = words(n);
    const std::size_t bytes = sizeof(event_state) + np * sizeof(void*) + (mw + e) * sizeof(std::uint64_t) +
                              n * sizeof(std::int64_t) * (timed ? 1 : 0) +
                              2 * n * sizeof(std::uint64_t) * (traced ? 1 : 0) + n * sizeof(word) + np + g.paths.size();
    void* mem = std::malloc(bytes);
    if (!mem) throw std::bad_alloc();
    auto* s = ::new (mem) event_state;
    s->stream = stream;
    auto* p = reinterpret_cast<unsigned char*>(s + 1);
    s->slots = reinterpret_cast<void**>(p);
    p += np * sizeof(void*);
    s->passes = reinterpret_cast<std::atomic<std::uint64_t>*>(p);
    p += mw * sizeof(std::uint64_t);
    s->edges = reinterpret_cast<std::atomic<std::uint64_t>*>(p);
    p += e * sizeof(std::uint64_t);
    s->started_ns = timed ? reinterpret_cast<std::int64_t*>(p) : nullptr;
    if (timed) p += n * sizeof(std::int64_t);
    if (traced) {
      s->trace_ticks = reinterpret_cast<std::uint64_t*>(p);
      p += 2 * n * sizeof(std::uint64_t);
    }
    s->state = reinterpret_cast<std::atomic<word>*>(p);
    p += n * sizeof(word);
    s->made = reinterpret_cast<std::atomic<std::uint8_t>*>(p);
    p += np;
    s->passed = p;
    for (std::size_t i = 0; i < mw + e; ++i) ::new (&s->passes[i]) std::atomic<std::uint64_t>(0);
    for (std::size_t i = 0; i < n; ++i) ::new (&s->state[i]) std::atomic<word>(0);
    for (std::size_t i = 0; i < np; ++i) ::new (&s->made[i]) std::atomic<std::uint8_t>(0);
    return s;
  }
  // Its products must be released first (release_products).
  static void destroy(event_state* s) noexcept {
    s->~event_state();
    std::free(s);
  }

  // Ready for event `id`. Nothing else touches it now: relaxed stores, published by the
  // scheduling of the event's first tasks. Its products were released.
  void reset(const graph& g, const event_id& next) noexcept {
    id = next;
    for (std::size_t i = 0, w = words(g.size()) + edge_words(g); i < w; ++i)
      passes[i].store(0, std::memory_order_relaxed);  // passes and edges lie together
    for (std::size_t i = 0; i < g.size(); ++i) state[i].store(0, std::memory_order_relaxed);
    std::memset(passed, 0, g.paths.size());
  }

  bool is_made(std::uint32_t p) const noexcept { return made[p].load(std::memory_order_acquire) != 0; }
  void set_pass(std::uint32_t m) noexcept {
    passes[m >> 6].fetch_or(std::uint64_t{1} << (m & 63), std::memory_order_relaxed);
  }
  bool passes_event(std::uint32_t m) const noexcept {
    return passes[m >> 6].load(std::memory_order_relaxed) & (std::uint64_t{1} << (m & 63));
  }

  // What module m adds to the checksum: a filter its decision, any module the digests of the
  // products it made. Once the event is done.
  std::uint64_t module_digest(const graph& g, std::uint32_t m) const noexcept {
    const node& n = g.nodes[m];
    std::uint64_t d = n.role() == module_role::filter && passes_event(m) ? 1 : 0;
    for (std::uint32_t p : n.event_products) {
      if (!is_made(p)) continue;
      const product_ops& ops = *g.products[p].ops;
      if (ops.digest_is_value) {
        std::uint64_t v;
        std::memcpy(&v, &slots[p], sizeof v);
        d += v;
      } else {
        d += ops.digest(ops.in_place ? static_cast<const void*>(&slots[p]) : slots[p]);
      }
    }
    return d;
  }

  // Destroys the event's products (the event is over, its output modules ran).
  void release_products(const graph& g) noexcept {
    for (std::uint32_t p : g.boxed_products)
      if (is_made(p)) g.products[p].ops->destroy(&slots[p]);
    for (std::size_t p = 0, n = g.products.size(); p < n; ++p) made[p].store(0, std::memory_order_relaxed);
  }
};

}  // namespace heddle::fw_detail
