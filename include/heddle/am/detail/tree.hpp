// SPDX-License-Identifier: Apache-2.0
// Calls to every node (offload::broadcast, for_each_node) travel along a binary tree, so that the
// caller sends two frames and waits for two replies however many nodes there are, and the last node
// is reached after about log2(N) hops.
//
// The tree is numbered from the caller, the origin O: relative rank r (1 to N-1) is node (O + r) mod
// N. A node that receives a tree_call frame for ranks [first, first + count) is rank `first`; it
// passes the call on to the two halves of [first + 1, first + count) (to the first rank of each),
// runs the function, and when its own result and both halves' replies are in, replies to its parent
// with one entry per node of its range. The origin does the same for [1, N) without running the
// function itself. A tree_call frame's payload: the range (two u32), then the arguments.
//
// An entry: u32 node, u8 outcome (tree_outcome), u64 length, then that many bytes: the result's
// encoding, or the failure's text. These are the decoders of both, which never trust a peer's bytes
// (the fuzzer runs them).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "heddle/am/errors.hpp"
#include "heddle/am/serialize.hpp"

namespace heddle::am_detail {

struct tree_range {
  static constexpr std::size_t bytes = 8;
  std::uint32_t first = 0, count = 0;

  void encode(std::byte* out) const noexcept {
    std::memcpy(out, &first, 4);
    std::memcpy(out + 4, &count, 4);
  }
  // The range at the start of a tree_call payload from a session of `nodes` nodes; decode_error
  // unless 1 <= first, 1 <= count and first + count <= nodes.
  static tree_range decode(std::span<const std::byte> payload, std::uint32_t nodes) {
    if (payload.size() < bytes)
      throw decode_error("heddle::offload: a tree call of " + std::to_string(payload.size()) +
                         " bytes, without its range");
    tree_range r;
    std::memcpy(&r.first, payload.data(), 4);
    std::memcpy(&r.count, payload.data() + 4, 4);
    if (r.first < 1 || r.count < 1 || r.first >= nodes || r.count > nodes - r.first)
      throw decode_error("heddle::offload: a tree call for ranks [" + std::to_string(r.first) + ", " +
                         std::to_string(std::uint64_t{r.first} + r.count) + ") in a session of " +
                         std::to_string(nodes) + " nodes");
    return r;
  }
  // The two halves of the ranks after `first`, each as a range (count 0: none).
  std::pair<tree_range, tree_range> halves() const noexcept {
    const std::uint32_t rest = count - 1, left = (rest + 1) / 2;
    return {tree_range{first + 1, left}, tree_range{first + 1 + left, rest - left}};
  }
};

enum class tree_outcome : std::uint8_t { value = 0, threw = 1, lost = 2 };

// Appends one entry to `out` (a writer: up to 64 bytes of entries stay in it, off the heap).
inline void append_tree_entry(writer& out, std::uint32_t node, tree_outcome outcome, std::span<const std::byte> bytes) {
  write(out, node);
  write(out, outcome);
  write(out, std::uint64_t{bytes.size()});
  out.bytes(bytes.data(), bytes.size());
}

struct tree_entry {
  tree_outcome outcome = tree_outcome::value;
  std::span<const std::byte> bytes;
  bool present = false;
};

// The entries of a whole tree's replies, by node, into `by_node` (one element per node of the
// session, all absent; the caller's memory, so that a small session's origin needs no heap): exactly
// one for every node but `origin`, else decode_error (what is wrong, and where).
inline void decode_tree_entries(std::span<const std::byte> in, std::uint32_t origin, std::span<tree_entry> by_node) {
  const auto nodes = static_cast<std::uint32_t>(by_node.size());
  std::size_t at = 0, seen = 0;
  while (at < in.size()) {
    if (in.size() - at < 13)
      throw decode_error("heddle::offload: a broadcast reply cut short at byte " + std::to_string(at));
    std::uint32_t node;
    std::uint64_t n;
    std::memcpy(&node, in.data() + at, 4);
    const auto outcome = static_cast<std::uint8_t>(in[at + 4]);
    std::memcpy(&n, in.data() + at + 5, 8);
    if (node >= nodes || node == origin || by_node[node].present)
      throw decode_error("heddle::offload: a broadcast reply with an entry for node " + std::to_string(node) +
                         (node >= nodes    ? " (no such node)"
                          : node == origin ? " (the caller)"
                                           : " (twice)"));
    if (outcome > static_cast<std::uint8_t>(tree_outcome::lost))
      throw decode_error("heddle::offload: a broadcast reply with outcome " + std::to_string(outcome) + " for node " +
                         std::to_string(node));
    if (n > in.size() - at - 13)
      throw decode_error("heddle::offload: a broadcast reply whose entry for node " + std::to_string(node) + " says " +
                         std::to_string(n) + " bytes, with " + std::to_string(in.size() - at - 13) + " left");
    by_node[node] = {static_cast<tree_outcome>(outcome), in.subspan(at + 13, static_cast<std::size_t>(n)), true};
    at += 13 + static_cast<std::size_t>(n);
    ++seen;
  }
  if (seen != nodes - 1)
    throw decode_error("heddle::offload: a broadcast reply with " + std::to_string(seen) + " entries for " +
                       std::to_string(nodes - 1) + " nodes");
}

}  // namespace heddle::am_detail
