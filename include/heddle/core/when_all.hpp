// when_all: one future for the values of several. Waits for every input; if any failed, the result
// carries the exception of the first failed input (in argument order) and the values are dropped.
// The result belongs to the runtime of the first input that has one.
#pragma once

#include <tuple>
#include <vector>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/when_all_state.hpp"
#include "heddle/core/future.hpp"

namespace heddle {

// future<tuple<A, B, ...>> from future<A>, future<B>, ... (a future<void> gives std::monostate).
template <class... T>
future<std::tuple<core_detail::slot_value_t<T>...>> when_all(future<T>&&... inputs) {
  if (!(inputs.valid() && ...)) throw invalid_future("heddle::when_all: an input future has no state");
  using S = core_detail::when_all_state<T...>;
  core_detail::runtime_core* home = nullptr;
  ((home = home ? home : core_detail::access::home_of(inputs)), ...);
  return {core_detail::adopt, core_detail::make_record<S>(inputs...), home};
}

// future<vector<T>> from a vector of futures, in order.
template <class T>
future<std::vector<core_detail::slot_value_t<T>>> when_all(std::vector<future<T>>&& inputs) {
  for (auto& f : inputs)
    if (!f.valid()) throw invalid_future("heddle::when_all: an input future has no state");
  using S = core_detail::when_all_range_state<T>;
  core_detail::runtime_core* home = nullptr;
  for (auto& f : inputs) home = home ? home : core_detail::access::home_of(f);
  return {core_detail::adopt, core_detail::make_record<S>(inputs), home};
}

}  // namespace heddle
