// SPDX-License-Identifier: Apache-2.0
// The product the example's modules share: the tracks of an event, each a random walk in the plane.
#pragma once

#include <cstdint>
#include <vector>

#include <heddle/fw/digest.hpp>

namespace fwplugin {

struct track {
  double x = 0, y = 0;  // where the walk ended, starting from the origin
  double length = 0;    // the path walked
  std::uint32_t steps = 0;

  double distance() const noexcept;  // from the origin to the end
};

using tracks = std::vector<track>;

// What a track adds to heddle-fw's checksum (heddle/fw/digest.hpp): its end point and length, so that
// runs with any number of threads can be compared.
std::uint64_t heddle_fw_digest(const track& t) noexcept;

}  // namespace fwplugin
