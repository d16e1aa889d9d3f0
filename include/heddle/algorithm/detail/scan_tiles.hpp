// The two passes of heddle's scans (heddle/algorithm/parallel_scan.hpp) over K tiles, in order:
//   pass 1, in parallel: tile 0 is scanned for good (its carry-in is known), every other tile only
//           reduced to its total;
//   between: the carries, serially: carry(1) = total(0), carry(i) = combine(carry(i-1), total(i-1));
//   pass 2, in parallel: tiles 1..K-1 scanned for good from their carries.
// Tiles 1..K-1 are read twice: memory traffic 3n against the serial scan's 2n, for a span of about
// 2n/K. oneTBB's parallel_scan reads twice exactly the pieces that were stolen; with one worker,
// heddle runs one tile (K = 1): a single pass, as the serial scan.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "heddle/algorithm/detail/fork.hpp"

namespace heddle::core_detail {

// Kernel: T first(): scans tile 0 for good and returns its total (including any initial value);
//         T reduce(i): tile i's total;  void final(i, T carry): scans tile i for good from carry;
//         T combine(T, T): the scan's operation.
// Returns the total of all tiles, or nothing when the tree stopped (failure or cancellation).
template <class T, class Kernel>
std::optional<T> scan_tiles(tree_context& ctx, std::size_t tiles, Kernel& k) {
  if (tiles <= 1) return std::optional<T>(std::in_place, k.first());
  std::vector<std::optional<T>> total(tiles);
  fork_for(ctx, 0, tiles, [&](std::size_t i) {
    if (i == 0) total[0].emplace(k.first());
    else total[i].emplace(k.reduce(i));
  });
  if (ctx.stopping()) return std::nullopt;
  std::vector<std::optional<T>> carry(tiles);  // carry[i]: what comes before tile i
  carry[1].emplace(std::move(*total[0]));
  for (std::size_t i = 2; i < tiles; ++i) carry[i].emplace(k.combine(T(*carry[i - 1]), std::move(*total[i - 1])));
  std::optional<T> all(std::in_place, k.combine(T(*carry[tiles - 1]), std::move(*total[tiles - 1])));
  fork_for(ctx, 1, tiles, [&](std::size_t i) { k.final(i, std::move(*carry[i])); });
  if (ctx.stopping()) return std::nullopt;
  return all;
}

}  // namespace heddle::core_detail
