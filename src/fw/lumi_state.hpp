// SPDX-License-Identifier: Apache-2.0
// One open luminosity block: its identity and its luminosity-block products
// (transition_products.hpp), from the decision to begin it until its end transitions are done.
#pragma once

#include <cstdint>

#include "graph.hpp"
#include "heddle/fw/luminosity_block.hpp"
#include "transition_products.hpp"

namespace heddle::fw_detail {

struct lumi_state : transition_products {
  luminosity_block_id id;

  lumi_state(const graph& g, luminosity_block_id lumi) : transition_products(g, g.lumi_products), id(lumi) {}

  // What the lumi adds to its run's checksum once its end transitions are done (0 in a process
  // without lumi products).
  std::uint64_t checksum() const noexcept {
    return transition_products::checksum((std::uint64_t{id.run} << 32) | id.lumi);
  }
};

// One open run: its number and its run products, from begin_run until its end_run transitions are
// done.
struct run_state : transition_products {
  std::uint32_t number;

  run_state(const graph& g, std::uint32_t run) : transition_products(g, g.run_products), number(run) {}

  // What the run adds to its own checksum once its end_run transitions are done (0 in a process
  // without run products). Lumis count from 1: (run << 32) is no lumi's identity.
  std::uint64_t checksum() const noexcept { return transition_products::checksum(std::uint64_t{number} << 32); }
};

}  // namespace heddle::fw_detail
