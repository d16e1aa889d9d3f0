// SPDX-License-Identifier: Apache-2.0
#include "heddle/core/errors.hpp"

// The key functions of the core layer's exceptions: defined here, once, so that their type_info
// and vtable live in this library alone and a throw in one library (or plugin) is caught by
// type in another (heddle/core/export.hpp).
namespace heddle {

task_cancelled::~task_cancelled() = default;
invalid_future::~invalid_future() = default;
configuration_error::~configuration_error() = default;

}  // namespace heddle
