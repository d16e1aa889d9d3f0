// SPDX-License-Identifier: Apache-2.0
#include "heddle/core/detail/futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace heddle::core_detail {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    tsp = &ts;
  }
  // Private futex: heddle's words are never shared between processes.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace heddle::core_detail
