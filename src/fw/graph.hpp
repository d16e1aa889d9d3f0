// SPDX-License-Identifier: Apache-2.0
// A finalized process as the processors see it (fw_detail::graph_of, process.hpp): modules by index,
// their inputs resolved, and the edges along which a finished module tells what waits for it. An
// edge joins a producer to one module that gets its product, or a filter to one step of one path.
// Each edge has two bits per event (event_state.hpp): the consumer sets one when it starts
// waiting, the producer the other when it is done, and whichever sets the second bit delivers, so
// each edge delivers exactly once without locks or waiter lists.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heddle/fw/conditions.hpp"
#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/process.hpp"
#include "module_access.hpp"

namespace heddle::fw_detail {

struct node {
  fw::module_spec spec;
  fw::module_factory make;
  // [0] always; stream modules one per stream once a run has made them (prepare_streams). Only
  // the process's setup and the processors' constructors change it, before any event runs.
  mutable std::vector<std::unique_ptr<module_base>> instances;
  // Per consumes / produces declaration (token index), the product: an index into the graph's
  // products, into its lumi_products where the declaration is in_lumi / end_luminosity_block, or
  // into its run_products where it is in_run / end_run (graph::table_of).
  std::vector<std::uint32_t> consumed;
  std::vector<std::uint32_t> products;
  std::vector<std::uint32_t> event_products;  // the products it makes in events (module_digest)
  // consumed and products with their types, as event::get / emplace read them (lumi declarations
  // carry typeid(void), which no token's type is: an event refuses them)
  std::vector<product_ref> reads, writes;
  std::vector<std::uint32_t> producers;     // the distinct modules it waits for
  std::vector<std::uint32_t> es_consumed;   // per es_consumes declaration (token index), the es item
  std::vector<std::uint32_t> es_producers;  // the distinct condition producers it waits for
  std::uint32_t first_in_edge = 0;          // its in-edges are [first_in_edge, +producers.size())
  std::vector<std::uint32_t> select_paths;  // output modules: path indices (empty: every event)
  std::uint64_t hash = 0;                   // of the label: checksums derive from it
  bool on_end_path = false;                 // runs once the event's paths are done (outputs)

  // Read on every module execution: kept here, not behind the instance's pointer.
  module_role role_ = module_role::producer;
  module_kind kind_ = module_kind::global;

  module_base& first() const noexcept { return *instances.front(); }
  const declarations& declared() const noexcept { return module_access::declared(first()); }
  module_role role() const noexcept { return role_; }
  module_kind kind() const noexcept { return kind_; }
  // The instance that processes events of stream `s`.
  module_base& instance(unsigned s) const noexcept { return *instances[kind_ == module_kind::stream ? s : 0]; }
};

// A condition producer of the process, and the intervals of its record.
struct es_node {
  std::string label, type, where;
  std::unique_ptr<es_producer> impl;
  const std::type_info* record = nullptr;
  std::string record_name;                      // as the record's C++ type is written
  std::vector<conditions::interval> intervals;  // from the process's conditions; none: one for the job
};

// One data item a condition producer makes (its es_produces, in order).
struct es_item {
  std::uint32_t producer;
  std::uint32_t index;
};

// The most producers and condition producers one module may wait on: its event state word counts
// them in 15 bits, with room for the request's own count and ExternalWork's two ends.
inline constexpr std::size_t max_waits = (1u << 15) - 4;

// One product of the process: which module makes it, of what type, under which instance name.
struct product {
  std::uint32_t module;
  std::string instance;
  const product_ops* ops;
};

// Where an edge delivers: a module (target < modules) or a path step (target - modules).
struct out_edge {
  std::uint32_t edge;
  std::uint32_t target;
};

struct path {
  std::string name;
  std::vector<std::uint32_t> members;  // module indices, in order
  std::uint32_t first_step = 0;        // its steps are [first_step, +members.size())
  std::uint64_t hash = 0;
};

class graph {
 public:
  std::vector<node> nodes;
  std::vector<product> products;
  std::vector<std::uint32_t> boxed_products;  // those not in their slot: destroyed when the event ends
  std::vector<es_node> es_nodes;
  std::vector<es_item> es_items;
  conditions source;                          // the intervals and payloads of records
  std::vector<product> lumi_products;         // made at end_luminosity_block
  std::vector<std::uint32_t> end_lumi_order;  // modules: makers of lumi products before their readers
  std::vector<product> run_products;          // made at end_run
  std::vector<std::uint32_t> end_run_order;   // modules: makers of run products before their readers
  std::vector<std::vector<out_edge>> out;     // per module
  std::vector<path> paths;
  std::vector<path> end_paths;
  std::vector<std::uint32_t> outputs;    // the distinct modules on end paths
  std::vector<std::uint32_t> step_edge;  // path step -> its edge
  std::vector<std::uint32_t> step_path;  // path step -> path index
  std::uint32_t num_edges = 0;
  bool finalized = false;

  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(nodes.size()); }
  // The products made at `when`.
  const std::vector<product>& table_of(transition when) const noexcept {
    return when == transition::event                  ? products
           : when == transition::end_luminosity_block ? lumi_products
                                                      : run_products;
  }
  std::uint32_t num_steps() const noexcept { return static_cast<std::uint32_t>(step_edge.size()); }
};

// Deterministic mixing for checksums (splitmix64's finaliser).
constexpr std::uint64_t mix(std::uint64_t x) noexcept { return digest_mix(x); }
std::uint64_t hash_label(const std::string& s) noexcept;

// One event's share of the checksum, from what ran and what it gave.
class event_checksum {
 public:
  // A module that ran: what it made (module_digest).
  void module(const node& n, std::uint64_t digest) noexcept { sum_ += mix(n.hash + digest); }
  void path(const path& p, bool passed) noexcept { sum_ += mix(p.hash + (passed ? 1 : 2)); }
  std::uint64_t finish(std::uint64_t event) const noexcept { return mix(sum_ ^ mix(event)); }

 private:
  std::uint64_t sum_ = 0;
};

// Makes the stream instances of every stream module, up to `streams` (one per event slot), and
// calls begin_job on the new ones (module_error naming the module if one throws).
void prepare_streams(const graph& g, unsigned streams);

}  // namespace heddle::fw_detail
