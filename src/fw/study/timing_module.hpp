// SPDX-License-Identifier: Apache-2.0
// What a timing module (modules.cpp) does for an event, as numbers, for the study's dependency
// bound (analysis.cpp): the study's own interface beside module_base, which knows none of it.
#pragma once

#include <cstdint>

namespace heddle::fw::study {

class timing_module {
 public:
  // Its time for `event`, in seconds, scaled as the process's timing says.
  virtual double seconds_for(std::uint64_t event) const noexcept = 0;
  // Whether it passes `event` (a filter's decision by its pass pattern; true for any other role).
  virtual bool passes(std::uint64_t event) const noexcept = 0;

 protected:
  ~timing_module() = default;
};

}  // namespace heddle::fw::study
