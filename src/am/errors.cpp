// SPDX-License-Identifier: Apache-2.0
#include "heddle/am/errors.hpp"
#include "heddle/am/functor.hpp"
#include "heddle/am/serialize.hpp"

// The key functions of the am layer's exceptions: defined here, once, so that their type_info
// and vtable live in this library alone and a throw in one library (or plugin) is caught by
// type in another (heddle/core/export.hpp).
namespace heddle::offload {

peer_error::~peer_error() = default;
peer_lost::~peer_lost() = default;
registry_mismatch::~registry_mismatch() = default;
remote_error::~remote_error() = default;
session_error::~session_error() = default;
unknown_handler::~unknown_handler() = default;
decode_error::~decode_error() = default;

}  // namespace heddle::offload
