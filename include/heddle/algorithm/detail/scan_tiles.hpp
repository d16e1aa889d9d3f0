// SPDX-License-Identifier: Apache-2.0
// The passes of heddle's scans (heddle/algorithm/parallel_scan.hpp) over K tiles, in order:
//   pass 1, in parallel: a tile whose carry-in is known when it starts (every tile before it was
//           already scanned for good: the frontier has reached it) is scanned for good and moves the
//           frontier on; any other tile is only reduced to its total;
//   between: the carries into the reduced tiles, serially (at most K operations);
//   pass 2, in parallel: the reduced tiles scanned for good from their carries.
// Tile 0 is always scanned in pass 1. With one worker every tile is (the tiles run in order), so the
// input is read once, as by a serial scan; a reduced tile is read twice. oneTBB's parallel_scan
// likewise reads twice only what was stolen.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "heddle/algorithm/detail/fork.hpp"

namespace heddle::core_detail {

// Kernel: T first(): scans tile 0 for good, returns everything through it (any initial value too);
//         T reduce(i): tile i's own total;
//         T final(i, T carry): scans tile i for good from carry, returns carry combined with tile i;
//         T combine(T, T): the scan's operation.
// Returns the total of all tiles, or nothing when the tree stopped (failure or cancellation).
template <class T, class Kernel>
std::optional<T> scan_tiles(tree_context& ctx, std::size_t tiles, Kernel& k) {
  if (tiles <= 1) return std::optional<T>(std::in_place, k.first());
  // through[i]: everything up to and including tile i when tile i was scanned in pass 1; else
  // tile i's own total. Each slot is written by the one task that processes its tile.
  std::vector<std::optional<T>> through(tiles);
  std::vector<char> scanned(tiles, 0);
  // Tiles [0, frontier) are scanned for good; through[frontier - 1] is then their total. Only the
  // task of tile `frontier` moves it, so the slots it reads were written before (release/acquire).
  std::atomic<std::size_t> frontier{0};
  fork_for(ctx, 0, tiles, [&](std::size_t i) {
    if (frontier.load(std::memory_order_acquire) == i) {
      through[i].emplace(i == 0 ? k.first() : k.final(i, T(*through[i - 1])));
      scanned[i] = 1;
      frontier.store(i + 1, std::memory_order_release);
    } else {
      through[i].emplace(k.reduce(i));
    }
  });
  if (ctx.stopping()) return std::nullopt;
  // carry[i]: everything before tile i, for the tiles pass 2 scans.
  std::vector<std::optional<T>> carry(tiles);
  std::vector<std::size_t> rest;
  std::optional<T> before;  // everything before tile i, as i advances
  for (std::size_t i = 0; i < tiles; ++i) {
    if (scanned[i]) {
      before.emplace(std::move(*through[i]));
    } else {
      T c(*before);  // tile 0 is always scanned: `before` is set
      carry[i].emplace(std::move(c));
      T next = k.combine(std::move(*before), std::move(*through[i]));
      before.reset();
      before.emplace(std::move(next));
      rest.push_back(i);
    }
  }
  fork_for(ctx, 0, rest.size(), [&](std::size_t j) { (void)k.final(rest[j], std::move(*carry[rest[j]])); });
  if (ctx.stopping()) return std::nullopt;
  return before;
}

}  // namespace heddle::core_detail
