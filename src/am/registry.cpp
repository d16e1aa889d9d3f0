// SPDX-License-Identifier: Apache-2.0
// The process's handler registry (heddle/am/functor.hpp): one per process, here in the am library,
// whichever shared object (a plugin, the program) registers a handler.
#include "heddle/am/functor.hpp"

namespace heddle::am_detail {

registry& registry::instance() {
  static registry r;
  return r;
}

}  // namespace heddle::am_detail
