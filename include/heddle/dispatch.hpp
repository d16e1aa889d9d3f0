// SPDX-License-Identifier: Apache-2.0
// The dispatch layer: serial queues, the concurrent queue, groups, and sources, on the runtime's
// own scheduler, so that queue items, futures and async operations share one pool of workers.
#pragma once

#include "heddle/dispatch/concurrent_queue.hpp"
#include "heddle/dispatch/errors.hpp"
#include "heddle/dispatch/group.hpp"
#include "heddle/dispatch/serial_queue.hpp"
#include "heddle/dispatch/source.hpp"
