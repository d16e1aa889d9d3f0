// SPDX-License-Identifier: Apache-2.0
// The products a luminosity block or a run makes in its end transition, while it is open: per
// product of its table (graph::lumi_products or graph::run_products) an 8-byte slot (the product
// itself when small, else a pointer to it) and a made flag. Written and read only by the
// transitions of that lumi or run, which run one at a time (the threaded processor's transition
// queue, or the reference's one thread), so nothing here is atomic; the queue's hand-over from one
// transition to the next orders them.
#pragma once

#include <cstdint>
#include <vector>

#include "graph.hpp"

namespace heddle::fw_detail {

class transition_products {
 public:
  std::vector<void*> slots;        // [products of the table]
  std::vector<std::uint8_t> made;  // [products of the table]

  transition_products(const graph& g, const std::vector<product>& table)
      : slots(table.size()), made(table.size()), g_(g), table_(table) {}
  ~transition_products() {
    for (std::size_t p = 0; p < made.size(); ++p)
      if (made[p] && !table_[p].ops->in_place) table_[p].ops->destroy(&slots[p]);
  }
  transition_products(const transition_products&) = delete;
  transition_products& operator=(const transition_products&) = delete;

  // What the products add to their run's checksum once the end transitions are done: the digest
  // of every product made, with its module's label, mixed with `identity` (which lumi, which run).
  // Nothing when the process declares no products of the table, so that such processes keep the
  // checksums they had before these products existed.
  std::uint64_t checksum(std::uint64_t identity) const noexcept {
    if (made.empty()) return 0;
    std::uint64_t sum = 0;
    for (std::size_t p = 0; p < made.size(); ++p) {
      if (!made[p]) continue;
      const product& q = table_[p];
      const void* where = q.ops->in_place ? static_cast<const void*>(&slots[p]) : slots[p];
      sum += mix(g_.nodes[q.module].hash + hash_label(q.instance) + q.ops->digest(where));
    }
    return mix(sum ^ mix(identity));
  }

 private:
  const graph& g_;
  const std::vector<product>& table_;
};

}  // namespace heddle::fw_detail
