// SPDX-License-Identifier: Apache-2.0
// What the dispatch layer's public classes hold for the rest of the layer and keep from users: a
// serial queue's state, a concurrent queue's runtime. Each class befriends `access`.
#pragma once

#include "heddle/dispatch/concurrent_queue.hpp"
#include "heddle/dispatch/serial_queue.hpp"

namespace heddle::dispatch_detail {

struct access {
  // The queue's state, or nullptr for a handle that was moved from; valid while `q` holds it.
  static queue_state* state_of(const serial_queue& q) noexcept { return q.s_; }
  // The runtime whose workers run `q`'s items.
  static core_detail::runtime_core* core_of(const concurrent_queue& q) noexcept { return q.core_; }
};

}  // namespace heddle::dispatch_detail
