// SPDX-License-Identifier: Apache-2.0
#include "process_group.hpp"

#include <mutex>

#include "environment.hpp"

namespace heddle::core_detail::trace {

namespace {
// Joined at a library's load, possibly before this library's own static objects are made: so
// constant-initialised.
constinit std::mutex group_m;
constinit process_group_member group;
}  // namespace

process_group_member joined_group() noexcept {
  std::lock_guard lock(group_m);
  return group;
}

void join_process_group(const process_group_member& member) noexcept {
  {
    std::lock_guard lock(group_m);
    group = member;
  }
  environment_session::joined(member);
}

}  // namespace heddle::core_detail::trace
