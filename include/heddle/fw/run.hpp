// SPDX-License-Identifier: Apache-2.0
// A run as its transitions see it (module_base::begin_run and end_run): its number, and the run
// products, which are made and read in the end transition, as luminosity-block products are in
// end_luminosity_block (luminosity_block.hpp; docs/fw.md, "Runs and luminosity blocks").
//
// A run product is declared with produces<T>(instance, transition::end_run) and written by its
// module's end_run through emplace / put; another module declares consumes<T>(tag, in_run) and
// reads it with get() in its own end_run, which then runs after the producer's. Products live until
// every module's end_run of the run has run, and count in that run's checksum (digest.hpp).
#pragma once

#include <cstdint>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/fw/detail/block_products.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw_detail {
struct run_state;
class graph;
struct event_access;
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Not copyable or movable: the framework makes one per module transition, valid only during that
// call. Run transitions never run concurrently with one another nor with any event or lumi
// transition (module_base.hpp).
class HEDDLE_EXPORT run : public fw_detail::block_products<run> {
 public:
  run(const run&) = delete;
  run& operator=(const run&) = delete;

  // Which run (CMS: run()); runs count from 1. Thread-safe (during the call).
  std::uint32_t number() const noexcept { return number_; }

  // get(token), emplace(token, args...), put(token, value): the products of this run, from
  // fw_detail::block_products (their contracts and thread safety are there).

 private:
  friend struct fw_detail::event_access;
  friend class fw_detail::block_products<run>;
  run(fw_detail::run_state& state, const fw_detail::graph& g, std::uint32_t module, bool ending) noexcept;

  const void* slot_to_read(std::uint32_t consumed, const std::type_info& type) const;
  void* slot_to_write(std::uint32_t produced, const std::type_info& type);
  void made(std::uint32_t produced) noexcept;

  fw_detail::run_state& state_;
  const fw_detail::graph& graph_;
  std::uint32_t module_;
  bool ending_;  // in end_run: products may be made
  std::uint32_t number_;
};

}  // namespace heddle::fw
