// SPDX-License-Identifier: Apache-2.0
// A luminosity block as its transitions see it (module_base::begin_luminosity_block and
// end_luminosity_block): its identity, and the luminosity-block products, which are made and read
// in the end transition. A run is divided into luminosity blocks ("lumis", counted from 1 in each
// run) of run_options::events_per_lumi events; with run_options::concurrent_lumis > 1 the threaded
// processor starts the events of the next lumi while the last events of the previous one finish
// (docs/fw.md, "Runs and luminosity blocks").
//
// A luminosity-block product is declared with produces<T>(instance, transition::end_luminosity_block)
// and written by its module's end_luminosity_block through emplace / put; another module declares
// consumes<T>(tag, in_lumi) and reads it with get() in its own end_luminosity_block, which then runs
// after the producer's. Products live until every module's end_luminosity_block of the lumi has run,
// and count in the run's checksum (digest.hpp), once per lumi.
#pragma once

#include <compare>
#include <cstdint>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/fw/detail/block_products.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw_detail {
struct lumi_state;
class graph;
struct event_access;
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Which luminosity block: its run and its number in the run (from 1).
struct luminosity_block_id {
  std::uint32_t run = 0;
  std::uint32_t lumi = 0;
  friend bool operator==(const luminosity_block_id&, const luminosity_block_id&) = default;
  friend auto operator<=>(const luminosity_block_id&, const luminosity_block_id&) = default;
};

// Not copyable or movable: the framework makes one per module transition, valid only during that
// call. Transitions of one lumi never run concurrently with each other; see module_base.hpp for
// what they may overlap.
class HEDDLE_EXPORT luminosity_block : public fw_detail::block_products<luminosity_block> {
 public:
  luminosity_block(const luminosity_block&) = delete;
  luminosity_block& operator=(const luminosity_block&) = delete;

  // Which lumi: its id, its run, its number in the run (CMS: luminosityBlock()). Thread-safe (during
  // the call).
  const luminosity_block_id& id() const noexcept { return id_; }
  std::uint32_t run() const noexcept { return id_.run; }
  std::uint32_t number() const noexcept { return id_.lumi; }

  // get(token), emplace(token, args...), put(token, value): the products of this lumi, from
  // fw_detail::block_products (their contracts and thread safety are there).

 private:
  friend struct fw_detail::event_access;
  friend class fw_detail::block_products<luminosity_block>;
  luminosity_block(fw_detail::lumi_state& state, const fw_detail::graph& g, std::uint32_t module, bool ending) noexcept;

  const void* slot_to_read(std::uint32_t consumed, const std::type_info& type) const;
  void* slot_to_write(std::uint32_t produced, const std::type_info& type);
  void made(std::uint32_t produced) noexcept;

  fw_detail::lumi_state& state_;
  const fw_detail::graph& graph_;
  std::uint32_t module_;
  bool ending_;  // in end_luminosity_block: products may be made
  luminosity_block_id id_;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::luminosity_block;
using fw::luminosity_block_id;
}  // namespace heddle::fw_detail
