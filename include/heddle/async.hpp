// SPDX-License-Identifier: Apache-2.0
// The async layer: timers, stream and file I/O, child processes and promises as futures, whose
// successors start by the strategy the user picks (heddle/core/strategy.hpp).
#pragma once

#include "heddle/async/errors.hpp"
#include "heddle/async/io.hpp"
#include "heddle/async/process.hpp"
#include "heddle/async/promise.hpp"
#include "heddle/async/timer.hpp"
