// SPDX-License-Identifier: Apache-2.0
// Which dimension of a multi-dimensional blocked range to split: the one that is longest relative
// to its grain (oneTBB's rule), among those that are divisible; ties go to the outer dimension,
// which keeps inner rows long.
#pragma once

#include <cstddef>

namespace heddle::core_detail {

// Whether dimension b should be split rather than a: b is divisible, and a is not or b is longer
// relative to its grain (size_b / grain_b > size_a / grain_a, compared without dividing).
template <class A, class B>
bool split_second(const A& a, const B& b) {
  if (!b.is_divisible()) return false;
  if (!a.is_divisible()) return true;
  return static_cast<double>(a.size()) * static_cast<double>(b.grainsize()) <
         static_cast<double>(b.size()) * static_cast<double>(a.grainsize());
}

}  // namespace heddle::core_detail
