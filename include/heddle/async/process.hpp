// Waiting for a child process as a future, through a pidfd: the runtime's process engine (one
// service thread over epoll) reaps the child when it exits.
#pragma once

#include <sys/types.h>

#include "heddle/async/errors.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle::async_detail {
HEDDLE_EXPORT heddle::core_detail::future_state<int>* wait_process(heddle::core_detail::runtime_core* core, pid_t pid);
}  // namespace heddle::async_detail

namespace heddle::io {

// The child's wait status, encoded as waitpid(2) gives it (use WIFEXITED, WEXITSTATUS, WIFSIGNALED,
// WTERMSIG). The child is reaped. A pid that is not a child of this process fails with
// std::system_error (ECHILD or ESRCH); a pid of 0 or below with EINVAL.
inline future<int> wait_process(runtime& rt, pid_t pid) {
  return {heddle::core_detail::adopt, async_detail::wait_process(core_detail::access::core_of(rt), pid), core_detail::access::core_of(rt)};
}
inline future<int> wait_process(pid_t pid) {
  heddle::core_detail::runtime_core* core = heddle::core_detail::current_core();
  return {heddle::core_detail::adopt, async_detail::wait_process(core, pid), core};
}

}  // namespace heddle::io
