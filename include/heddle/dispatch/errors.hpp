// SPDX-License-Identifier: Apache-2.0
// Errors of the dispatch layer.
#pragma once

#include <stdexcept>

#include "heddle/core/export.hpp"

namespace heddle {

// sync() on a serial queue from an item that the queue (or a queue it targets) is running: the
// call would wait for itself. Thrown at once, instead of deadlocking.
class HEDDLE_EXPORT queue_deadlock : public std::logic_error {
 public:
  ~queue_deadlock() override;
  using std::logic_error::logic_error;
};

}  // namespace heddle
