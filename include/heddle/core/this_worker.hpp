// SPDX-License-Identifier: Apache-2.0
// heddle::this_worker: which worker of which runtime the calling thread is. One thread-local read.
#pragma once

#include "heddle/core/detail/worker.hpp"

namespace heddle {

class runtime;

namespace this_worker {

// The calling worker's index in its runtime, from 0 to num_threads() - 1; -1 on a thread that is
// no runtime's worker, and on a worker while it runs another runtime's execute(f) (it then acts as
// an outsider of that runtime). oneTBB's this_task_arena::current_thread_index(), which is -1 (its
// task_arena::not_initialized) on threads outside any arena. Never throws. Thread-safe: answers
// for the calling thread.
inline int index() noexcept {
  const core_detail::worker* w = core_detail::current_worker;
  return w ? static_cast<int>(w->index) : -1;
}

// The runtime whose worker calls, or nullptr where index() is -1. The default runtime's workers
// give &default_runtime(). Never throws. Thread-safe: answers for the calling thread.
inline heddle::runtime* runtime() noexcept {
  const core_detail::worker* w = core_detail::current_worker;
  return w ? w->owner : nullptr;
}

}  // namespace this_worker
}  // namespace heddle
