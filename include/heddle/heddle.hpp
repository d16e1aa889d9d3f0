// SPDX-License-Identifier: Apache-2.0
// heddle: a task-parallel runtime. This header brings in every public layer.
#pragma once

#include "heddle/async.hpp"
#include "heddle/core.hpp"
#include "heddle/dispatch.hpp"
