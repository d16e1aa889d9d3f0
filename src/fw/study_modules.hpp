// SPDX-License-Identifier: Apache-2.0
// The CMS study's built-in timing modules (demo_modules.cpp; their types in module_types.cpp):
// what the process assembly (process_builder.cpp) asks of them.
#pragma once

#include <cstdint>
#include <string>

#include "heddle/fw/config.hpp"
#include "heddle/fw/process.hpp"

namespace heddle::fw_detail {

// What a timing module does for an event, as numbers (demo_rules.hpp), for the study's dependency
// bound (study_analysis.cpp): the study's own interface beside module_base, which knows none of it.
class timing_module {
 public:
  // Its time for `event`, in seconds, scaled as the process's timing says.
  virtual double seconds_for(std::uint64_t event) const noexcept = 0;
  // Whether it passes `event` (a filter's decision by its pass pattern; true for any other role).
  virtual bool passes(std::uint64_t event) const noexcept = 0;

 protected:
  ~timing_module() = default;
};

// The factory of the built-in module configured by `c` (a type of module_types.hpp), spending its
// times as `timing` says, at timing.busy_wait_scale busy-wait iterations per second, else at the
// process options' busyWaitScaleFactor (`options`, process_config::options, where
// demo_modules.cpp adds it). config_error naming `named` ("t.json: process.producers[3] 'alpha'")
// when the type is not built in or neither scale is given.
fw::module_factory study_module_factory(const fw::module_config& c, const fw::timing_options& timing,
                                        const parameter_set& options, const std::string& named);

}  // namespace heddle::fw_detail
