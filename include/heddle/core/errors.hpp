// SPDX-License-Identifier: Apache-2.0
// Errors the core runtime reports through futures, groups and its own calls.
#pragma once

#include <stdexcept>

#include "heddle/core/export.hpp"

namespace heddle {

// A task that never ran: its task_group was cancelled, or its runtime stopped before starting it.
class HEDDLE_EXPORT task_cancelled : public std::runtime_error {
 public:
  ~task_cancelled() override;
  using std::runtime_error::runtime_error;
};

// get(), wait(), then() and friends on a future that holds no state (default-constructed or moved from).
class HEDDLE_EXPORT invalid_future : public std::logic_error {
 public:
  ~invalid_future() override;
  using std::logic_error::logic_error;
};

// A bad runtime setting, such as HEDDLE_NUM_THREADS=abc or zero threads.
class HEDDLE_EXPORT configuration_error : public std::invalid_argument {
 public:
  ~configuration_error() override;
  using std::invalid_argument::invalid_argument;
};

}  // namespace heddle
