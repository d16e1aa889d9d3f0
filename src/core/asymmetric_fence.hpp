// SPDX-License-Identifier: Apache-2.0
// An asymmetric memory fence: a cheap side that is only a compiler barrier, and a heavy side that
// makes every thread of the process pass a full fence. heddle uses it for the one Dekker pattern on
// its hot path: a worker's spawn stores to its deque and then loads the sleeper count; a worker
// falling asleep stores to the sleeper count and then loads the deques. Both sides need a full
// fence between their store and their load, or each can miss the other (x86 reorders a later load
// before an earlier store), and a spawned task then waits for a sleeper that was never woken. A
// fence on every spawn would cost a fifth of a task; going to sleep already costs a system call.
//
// The heavy side is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (Linux 4.14): it interrupts every
// CPU that is running a thread of this process, which completes the stores in its store buffer.
// Either the spawner's load ran after that point, and sees the sleeper's store, which preceded the
// call; or it ran before, and the spawner's store, earlier in program order and kept there by the
// compiler barrier, is visible once the call returns. Measured on the development VM: 0.15 µs with
// no other thread running, 0.6 µs with one.
#pragma once

#include <atomic>

#include "heddle/core/export.hpp"

namespace heddle::core_detail {

// True when the heavy side works in this process (the kernel has membarrier, no filter forbids it,
// and HEDDLE_PARKING is not `timed`). Decided once, on the first call; thread-safe. Exported for
// the wake-up tests (tests/core/wakeup_test.cpp), which read which sleep the workers use.
HEDDLE_EXPORT bool asymmetric_fence_available() noexcept;

// The heavy side. Only after asymmetric_fence_available() returned true.
void asymmetric_fence_heavy() noexcept;

// The cheap side: keeps the compiler from moving the load above the store; the CPU may still
// reorder them, which the heavy side accounts for.
inline void asymmetric_fence_light() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

}  // namespace heddle::core_detail
