// SPDX-License-Identifier: Apache-2.0
// How the study's timing modules spend their time: spinning (busy-wait, calibrated in iterations per
// second like the study's calibration program), sleeping in the kernel, or, in timer mode, not at
// all (async_handle::done_at; see module.hpp).
#pragma once

#include <chrono>
#include <cstdint>

#include "heddle/core/export.hpp"

namespace heddle::fw {

// Spins for `iterations` iterations of a fixed, dependent arithmetic loop that the compiler cannot
// remove or shorten. Thread-safe; holds the calling thread (a worker too) for the whole spin.
HEDDLE_EXPORT void busy_wait(std::uint64_t iterations) noexcept;

// Iterations of busy_wait per second on this machine: the median of `rounds` timed rounds of about
// `round` each (the value for busyWaitScaleFactor, or heddle-fw --busy-wait-scale). Thread-safe;
// spins the calling thread for about rounds x round (best on an otherwise idle core).
HEDDLE_EXPORT double calibrate_busy_wait(std::chrono::milliseconds round = std::chrono::milliseconds(100),
                                         int rounds = 5);

// Blocks the calling thread for `seconds` (usleep, as the study's sleeping modules do). Thread-safe;
// holds the calling thread, a worker too.
HEDDLE_EXPORT void sleep_seconds(double seconds) noexcept;

}  // namespace heddle::fw
