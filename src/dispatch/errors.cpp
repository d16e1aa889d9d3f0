// SPDX-License-Identifier: Apache-2.0
#include "heddle/dispatch/errors.hpp"

// The key functions of the dispatch layer's exceptions: defined here, once, so that their type_info
// and vtable live in this library alone and a throw in one library (or plugin) is caught by
// type in another (heddle/core/export.hpp).
namespace heddle {

queue_deadlock::~queue_deadlock() = default;

}  // namespace heddle
