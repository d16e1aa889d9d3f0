// One open luminosity block's products: per lumi product of the process an 8-byte slot (the product
// itself when small, else a pointer to it) and a made flag. Written and read only by the lumi's
// transitions, which run one at a time (threaded.cpp's transition queue), so nothing here is
// atomic; the queue's hand-over from one transition to the next orders them.
#pragma once

#include <cstdint>
#include <vector>

#include "graph.hpp"
#include "heddle/fw/luminosity_block.hpp"

namespace heddle::fw::detail {

struct lumi_state {
  luminosity_block_id id;
  std::vector<void*> slots;          // [lumi products]
  std::vector<std::uint8_t> made;    // [lumi products]

  lumi_state(const graph& g, luminosity_block_id lumi) : id(lumi), slots(g.lumi_products.size()), made(g.lumi_products.size()), g_(g) {}
  ~lumi_state() {
    for (std::size_t p = 0; p < made.size(); ++p)
      if (made[p] && !g_.lumi_products[p].ops->in_place) g_.lumi_products[p].ops->destroy(&slots[p]);
  }
  lumi_state(const lumi_state&) = delete;
  lumi_state& operator=(const lumi_state&) = delete;

  // What the lumi adds to its run's checksum once its end transitions are done: the digest of
  // every lumi product made, with its module's label and the lumi's identity. Nothing when the
  // process declares no lumi products, so that such processes keep the checksums they had before
  // lumis existed.
  std::uint64_t checksum() const noexcept {
    if (made.empty()) return 0;
    std::uint64_t sum = 0;
    for (std::size_t p = 0; p < made.size(); ++p) {
      if (!made[p]) continue;
      const product& q = g_.lumi_products[p];
      const void* where = q.ops->in_place ? static_cast<const void*>(&slots[p]) : slots[p];
      sum += mix(g_.nodes[q.module].hash + hash_label(q.instance) + q.ops->digest(where));
    }
    return mix(sum ^ mix((std::uint64_t{id.run} << 32) | id.lumi));
  }

 private:
  const graph& g_;
};

}  // namespace heddle::fw::detail
