// SPDX-License-Identifier: Apache-2.0
// Every kind of record the writer knows: the core's own (core_kinds.cpp) and those the layers
// above installed (install_kind, heddle/core/detail/trace_extension.hpp), looked up by kind.
#pragma once

#include <array>
#include <vector>

#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::core_detail::trace {

// The core's kinds' formats, indexed by kind (core_kinds.cpp).
const kind_format& core_format(kind k) noexcept;

// A copy of the formats known now, made when a session stops: lookups without a lock.
class kind_table {
 public:
  kind_table();
  // `k`'s format, or nullptr for a kind nobody installed (its layer's library did not install it:
  // the writer draws such a record as an instant that says so).
  const kind_format* find(kind k) const noexcept {
    const auto& codes = layers_[layer_of(k)];
    const std::size_t code = static_cast<std::uint16_t>(k) & 0xff;
    return code < codes.size() && codes[code].write ? &codes[code] : nullptr;
  }

 private:
  std::array<std::vector<kind_format>, 256> layers_;
};

}  // namespace heddle::core_detail::trace
