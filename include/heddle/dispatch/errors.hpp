// Errors of the dispatch layer.
#pragma once

#include <stdexcept>

namespace heddle {

// sync() on a serial queue from an item that the queue (or a queue it targets) is running: the
// call would wait for itself. Thrown at once, instead of deadlocking.
class queue_deadlock : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace heddle
