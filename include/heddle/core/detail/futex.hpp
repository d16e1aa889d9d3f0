// SPDX-License-Identifier: Apache-2.0
// Thin wrappers over the Linux futex system call: the one way heddle puts a thread to sleep.
#pragma once

#include <atomic>
#include <cstdint>

#include "heddle/core/export.hpp"

namespace heddle::core_detail {

// Sleeps while *word == expected; returns on a wake, a signal, a timeout or a changed value.
// Callers always re-check their condition: spurious returns are part of the contract.
HEDDLE_EXPORT void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                              std::int64_t timeout_ns = -1) noexcept;

// Wakes up to `count` threads sleeping on `word`. Only the address is used: calling it on memory
// that was freed a moment ago is harmless (the kernel finds no sleeper there).
HEDDLE_EXPORT void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

// A spin-loop hint for the core (PAUSE on x86).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace heddle::core_detail
