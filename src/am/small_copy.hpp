// SPDX-License-Identifier: Apache-2.0
// Copies of a few bytes on the call path with moves of fixed sizes, not a call of memcpy (whose
// entry, size dispatch and return are most of what a copy of a small payload costs).
#pragma once

#include <cstddef>
#include <cstring>
#include <span>

namespace heddle::am_detail {

// Copies `from` (at most 16 bytes) to `to`: two moves of 8 or of 4 bytes, overlapping where the
// size is not one of them, or up to three single bytes.
inline void copy_small(std::byte* to, std::span<const std::byte> from) noexcept {
  const std::size_t n = from.size();
  const std::byte* f = from.data();
  if (n >= 8) {
    std::memcpy(to, f, 8);
    std::memcpy(to + n - 8, f + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(to, f, 4);
    std::memcpy(to + n - 4, f + n - 4, 4);
  } else if (n) {
    to[0] = f[0];
    to[n / 2] = f[n / 2];
    to[n - 1] = f[n - 1];
  }
}
inline constexpr std::size_t copy_small_bytes = 16;

}  // namespace heddle::am_detail
