// SPDX-License-Identifier: Apache-2.0
// What every composition over a vector of futures checks and picks from its inputs.
#pragma once

#include <vector>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/future.hpp"

namespace heddle::core_detail {

// Throws invalid_future(message) if an input has no state; the inputs are left untouched.
template <class T>
void check_inputs(const std::vector<future<T>>& inputs, const char* message) {
  for (auto& f : inputs)
    if (!f.valid()) throw invalid_future(message);
}

// The runtime of the first input that has one: where the composition's successors go.
template <class T>
runtime_core* first_home(const std::vector<future<T>>& inputs) noexcept {
  for (auto& f : inputs)
    if (runtime_core* h = access::home_of(f)) return h;
  return nullptr;
}

}  // namespace heddle::core_detail
