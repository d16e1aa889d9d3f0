// SPDX-License-Identifier: Apache-2.0
// The core runtime: tasks as futures over per-worker work-stealing deques.
#pragma once

#include "heddle/algorithm.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/co_task.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/isolate.hpp"
#include "heddle/core/per_worker.hpp"
#include "heddle/core/ready_future.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/shared_future.hpp"
#include "heddle/core/stats.hpp"
#include "heddle/core/strategy.hpp"
#include "heddle/core/task_group.hpp"
#include "heddle/core/this_worker.hpp"
#include "heddle/core/when_all.hpp"
#include "heddle/core/when_any.hpp"
