// SPDX-License-Identifier: Apache-2.0
#include "module_types.hpp"

#include <algorithm>
#include <string>

#include "heddle/fw/process.hpp"

namespace heddle::fw_detail {

namespace {
using enum module_role;

const std::vector<module_type> types = {
    // The test framework's producers.
    {"BusyWaitProducer", producer, spend::busy, time_key::average},
    {"SleepingProducer", producer, spend::sleep, time_key::average},
    {"FastProducer", producer},
    {"EventTimesBusyWaitProducer", producer, spend::busy, time_key::event_times},
    {"EventTimesSleepingProducer", producer, spend::sleep, time_key::event_times},
    {"SleepingWithAcquireProducer", producer, spend::acquire, time_key::average},
    {"ThreadSafeProducer", producer, spend::nothing, time_key::none, false, false, true},
    {"ThrowingProducer", producer, spend::nothing, time_key::none, false, true},
    // Its filters.
    {"PassFilter", filter},
    {"BusyWaitPassFilter", filter, spend::busy, time_key::average},
    {"SleepingPassFilter", filter, spend::sleep, time_key::average},
    {"FastPassFilter", filter},
    {"EventTimesBusyWaitPassFilter", filter, spend::busy, time_key::event_times},
    {"EventTimesSleepingPassFilter", filter, spend::sleep, time_key::event_times},
    {"EventTimesBusyWaitParallelForPassFilter", filter, spend::busy, time_key::event_times, true},
    {"EventTimesSleepingParallelForPassFilter", filter, spend::sleep, time_key::event_times, true},
    {"ThreadSaferGetterFilter", filter},
    {"ThrowingFilter", filter, spend::nothing, time_key::none, false, true},
    // heddle's output modules, for end paths.
    {"OutputModule", output},
    {"BusyWaitOutputModule", output, spend::busy, time_key::average},
    {"SleepingOutputModule", output, spend::sleep, time_key::average},
    {"EventTimesBusyWaitOutputModule", output, spend::busy, time_key::event_times},
    {"EventTimesSleepingOutputModule", output, spend::sleep, time_key::event_times},
};
}  // namespace

const module_type* find_module_type(std::string_view name) noexcept {
  auto it = std::find_if(types.begin(), types.end(), [&](const module_type& t) { return t.name == name; });
  return it == types.end() ? nullptr : &*it;
}

const std::vector<module_type>& module_types() noexcept { return types; }

}  // namespace heddle::fw_detail

namespace heddle::fw {

const std::vector<std::string>& known_module_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& t : fw_detail::module_types()) v.emplace_back(t.name);
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

}  // namespace heddle::fw
