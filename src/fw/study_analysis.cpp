// SPDX-License-Identifier: Apache-2.0
// The dependency bound of a configuration of the study's timing modules: their times and pass
// patterns, as the modules themselves compute them (timing_module, study_modules.hpp), fed to the
// framework's generic bound (analysis.cpp), which knows nothing of the study.
#include <cstdint>
#include <vector>

#include "heddle/fw/analysis.hpp"
#include "heddle/fw/process.hpp"
#include "study_modules.hpp"

namespace heddle::fw {

dependency_bound analyse_dependencies(const process_config& config, double time_scale, std::uint64_t events) {
  // The process checks the configuration and resolves its labels; its modules are made, not run.
  process p = make_process(config, timing_options{wait_mode::as_configured, time_scale, 1});
  p.finalize();
  // A module of another type (a registered one) costs nothing and passes every event.
  std::vector<const fw_detail::timing_module*> timed;
  for (std::size_t m = 0; m < config.modules.size(); ++m)
    timed.push_back(dynamic_cast<const fw_detail::timing_module*>(&p.module(m)));
  const module_costs costs{[&](std::uint32_t m, std::uint64_t e) { return timed[m] ? timed[m]->seconds_for(e) : 0.0; },
                           [&](std::uint32_t m, std::uint64_t e) { return !timed[m] || timed[m]->passes(e); }};
  return analyse_dependencies(p, costs, events);
}

}  // namespace heddle::fw
