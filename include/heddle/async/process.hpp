// SPDX-License-Identifier: Apache-2.0
// Waiting for a child process as a future, through a pidfd: the runtime's process engine (one
// service thread over epoll) reaps the child when it exits.
//
// Calling: thread-safe; any thread. With a runtime the wait belongs to it (`rt` must be alive; a
// stopping one gives a future failed with task_cancelled); without one, to the calling thread's
// runtime: its worker's, the one it runs a successor for or has entered (runtime::execute), else
// the default runtime, started on first use.
#pragma once

#include <sys/types.h>

#include "heddle/async/detail/start_op.hpp"
#include "heddle/async/errors.hpp"
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
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<int> wait_process(runtime& rt, pid_t pid) {
  return async_detail::start_on<async_detail::wait_process>(rt, pid);
}
inline future<int> wait_process(pid_t pid) { return async_detail::start_here<async_detail::wait_process>(pid); }

}  // namespace heddle::io
