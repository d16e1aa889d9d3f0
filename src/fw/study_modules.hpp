// SPDX-License-Identifier: Apache-2.0
// The CMS study's built-in timing modules (demo_modules.cpp; their types in module_types.cpp):
// what the process assembly (process_builder.cpp) asks of them.
#pragma once

#include <string>

#include "heddle/fw/config.hpp"
#include "heddle/fw/process.hpp"

namespace heddle::fw::detail {

// The factory of the built-in module configured by `c` (a type of module_types.hpp), spending its
// times as `timing` says, at timing.busy_wait_scale busy-wait iterations per second, else at
// `config_busy_wait_scale` (process.options.busyWaitScaleFactor). config_error naming `named`
// ("t.json: process.producers[3] 'alpha'") when the type is not built in or neither scale is given.
module_factory study_module_factory(const module_config& c, const timing_options& timing, double config_busy_wait_scale,
                                    const std::string& named);

}  // namespace heddle::fw::detail
