// SPDX-License-Identifier: Apache-2.0
// The option sets of the range algorithms: a cancellation token and a partitioner, in any order.
#pragma once

#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/partitioner.hpp"
#include "heddle/core/cancellation.hpp"

namespace heddle::core_detail {

template <class O>
concept range_option = one_of_options<O, cancellation_token, auto_partitioner, simple_partitioner, static_partitioner>;

template <class O>
concept token_option = one_of_options<O, cancellation_token>;

// The caller's token among the options, or a token that is never cancelled.
template <class... O>
cancellation_token token_of(const O&... options) {
  return option_or<cancellation_token>(cancellation_token{}, options...);
}

}  // namespace heddle::core_detail
