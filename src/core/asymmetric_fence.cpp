// SPDX-License-Identifier: Apache-2.0
#include "asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace heddle::core_detail {

namespace {

long membarrier(int cmd) noexcept { return ::syscall(__NR_membarrier, cmd, 0, 0); }

bool register_membarrier() noexcept {
  // HEDDLE_PARKING=timed: the fallback on purpose, so that it is tested on kernels that have the
  // fence, and as a way out should a kernel's membarrier misbehave.
  if (const char* v = std::getenv("HEDDLE_PARKING"); v && std::strcmp(v, "timed") == 0) return false;
  const long commands = membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || !(commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  // Registration is per process and idempotent; the command fails with EPERM without it.
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

bool asymmetric_fence_available() noexcept {
  static const bool available = register_membarrier();
  return available;
}

void asymmetric_fence_heavy() noexcept {
  // It cannot fail once registered (EINVAL and EPERM are excluded above); should it ever, a full
  // fence here still orders this thread, and the sleeper's safety-net timeout bounds the rest.
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace heddle::core_detail
