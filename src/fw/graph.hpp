// A finalized process as the processors see it (detail::graph_of, process.hpp): modules by index,
// their inputs resolved, and the edges along which a finished module tells what waits for it. An
// edge joins a producer to one module that gets its product, or a filter to one step of one path.
// Each edge has two bits per event (event_state.hpp): the consumer sets one when it starts
// waiting, the producer the other when it is done, and whichever sets the second bit delivers, so
// each edge delivers exactly once without locks or waiter lists.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heddle/fw/process.hpp"

namespace heddle::fw::detail {

struct node {
  module_decl decl;
  std::unique_ptr<module> impl;
  std::vector<std::uint32_t> inputs;     // per declared input, the producer's index (event_view order)
  std::vector<std::uint32_t> producers;  // the distinct producers it waits for
  std::uint32_t first_in_edge = 0;       // its in-edges are [first_in_edge, +producers.size())
  std::vector<std::uint32_t> select_paths;  // output modules: path indices (empty: every event)
  std::uint64_t hash = 0;                // of the label: products and checksums derive from it
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
  std::vector<std::vector<out_edge>> out;  // per module
  std::vector<path> paths;
  std::vector<path> end_paths;
  std::vector<std::uint32_t> outputs;        // the distinct output modules on end paths
  std::vector<std::uint32_t> step_edge;      // path step -> its edge
  std::vector<std::uint32_t> step_path;      // path step -> path index
  std::uint32_t num_edges = 0;
  bool finalized = false;

  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(nodes.size()); }
  std::uint32_t num_steps() const noexcept { return static_cast<std::uint32_t>(step_edge.size()); }
};

// Deterministic mixing for products and checksums (splitmix64's finaliser).
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
std::uint64_t hash_label(const std::string& s) noexcept;

// One event's share of the checksum, from what ran and what it gave.
class event_checksum {
 public:
  void module(const node& n, std::int64_t result) noexcept {
    sum_ += mix(n.hash + static_cast<std::uint64_t>(result));
  }
  void path(const path& p, bool passed) noexcept { sum_ += mix(p.hash + (passed ? 1 : 2)); }
  std::uint64_t finish(std::uint64_t event) const noexcept { return mix(sum_ ^ mix(event)); }

 private:
  std::uint64_t sum_ = 0;
};

// The run an event belongs to (runs count from 1).
constexpr std::uint32_t run_of(std::uint64_t event, std::uint64_t events_per_run) noexcept {
  return events_per_run == 0 ? 1 : static_cast<std::uint32_t>(event / events_per_run + 1);
}

}  // namespace heddle::fw::detail
