// SPDX-License-Identifier: Apache-2.0
// The built-in module types: what each one does, so that the configuration reader knows which
// keys a type needs and make_process knows what to build.
#pragma once

#include <string_view>
#include <vector>

#include "heddle/fw/module_base.hpp"

namespace heddle::fw_detail {

enum class spend : std::uint8_t { nothing, busy, sleep, acquire };  // acquire: ExternalWork, a timer by default
enum class time_key : std::uint8_t { none, average, event_times };

struct module_type {
  std::string_view name;
  module_role role;
  spend how = spend::nothing;
  time_key times = time_key::none;
  bool parallel_for = false;  // the time is split into nRanges ranges run in parallel
  bool throws = false;
  bool fixed_value = false;  // ThreadSafeProducer: adds its configured value
};

// The type named `name` (without "demo::"), or null.
const module_type* find_module_type(std::string_view name) noexcept;
const std::vector<module_type>& module_types() noexcept;

}  // namespace heddle::fw_detail
