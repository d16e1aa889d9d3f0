// SPDX-License-Identifier: Apache-2.0
// The study's timing module types: what each one does, so that its entry's keys are known
// (settings.cpp) and the module knows how to spend its time (modules.cpp). A constant table:
// the registrations read it while the program starts, before any dynamic initialisation.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "heddle/fw/module_base.hpp"

namespace heddle::fw::study {

enum class spend : std::uint8_t { nothing, busy, sleep, acquire };  // acquire: ExternalWork, a timer by default
enum class time_key : std::uint8_t { none, average, event_times };

struct module_type {
  std::string_view name;  // as registered without "demo::"; registered with it too
  module_role role;
  spend how = spend::nothing;
  time_key times = time_key::none;
  bool parallel_for = false;  // the time is split into nRanges ranges run in parallel
  bool throws = false;
  bool fixed_value = false;  // ThreadSafeProducer: adds its configured value
};

// clang-format off
// Formatted by hand: one type per line, as a table.
inline constexpr std::array<module_type, 23> module_types{{
    // The test framework's producers.
    {"BusyWaitProducer", module_role::producer, spend::busy, time_key::average},
    {"SleepingProducer", module_role::producer, spend::sleep, time_key::average},
    {"FastProducer", module_role::producer},
    {"EventTimesBusyWaitProducer", module_role::producer, spend::busy, time_key::event_times},
    {"EventTimesSleepingProducer", module_role::producer, spend::sleep, time_key::event_times},
    {"SleepingWithAcquireProducer", module_role::producer, spend::acquire, time_key::average},
    {"ThreadSafeProducer", module_role::producer, spend::nothing, time_key::none, false, false, true},
    {"ThrowingProducer", module_role::producer, spend::nothing, time_key::none, false, true},
    // Its filters.
    {"PassFilter", module_role::filter},
    {"BusyWaitPassFilter", module_role::filter, spend::busy, time_key::average},
    {"SleepingPassFilter", module_role::filter, spend::sleep, time_key::average},
    {"FastPassFilter", module_role::filter},
    {"EventTimesBusyWaitPassFilter", module_role::filter, spend::busy, time_key::event_times},
    {"EventTimesSleepingPassFilter", module_role::filter, spend::sleep, time_key::event_times},
    {"EventTimesBusyWaitParallelForPassFilter", module_role::filter, spend::busy, time_key::event_times, true},
    {"EventTimesSleepingParallelForPassFilter", module_role::filter, spend::sleep, time_key::event_times, true},
    {"ThreadSaferGetterFilter", module_role::filter},
    {"ThrowingFilter", module_role::filter, spend::nothing, time_key::none, false, true},
    // heddle's output modules, for end paths.
    {"OutputModule", module_role::output},
    {"BusyWaitOutputModule", module_role::output, spend::busy, time_key::average},
    {"SleepingOutputModule", module_role::output, spend::sleep, time_key::average},
    {"EventTimesBusyWaitOutputModule", module_role::output, spend::busy, time_key::event_times},
    {"EventTimesSleepingOutputModule", module_role::output, spend::sleep, time_key::event_times},
}};
// clang-format on

// The type named `name`, with or without "demo::"; null if none is.
constexpr const module_type* find_module_type(std::string_view name) noexcept {
  if (name.starts_with("demo::")) name.remove_prefix(6);
  for (const module_type& t : module_types)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace heddle::fw::study
