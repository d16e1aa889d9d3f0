// SPDX-License-Identifier: Apache-2.0
#include "heddle/fw/errors.hpp"

// The key functions of the fw layer's exceptions: defined here, once, so that their type_info
// and vtable live in this library alone and a throw in one library (or plugin) is caught by
// type in another (heddle/core/export.hpp).
namespace heddle::fw {

config_error::~config_error() = default;
module_error::~module_error() = default;
product_error::~product_error() = default;

}  // namespace heddle::fw
