// The dependency bound of a configuration of the study's timing modules: their times and pass
// patterns (demo_rules.hpp, the numbers demo_modules.cpp spends and returns) fed to the framework's
// generic bound (analysis.cpp), which knows nothing of the study.
#include <cstdint>
#include <vector>

#include "demo_rules.hpp"
#include "graph.hpp"
#include "heddle/fw/analysis.hpp"
#include "heddle/fw/process.hpp"

namespace heddle::fw {

dependency_bound analyse_dependencies(const process_config& config, double time_scale, std::uint64_t events) {
  // The process checks the configuration and resolves its labels; its modules are not run. They
  // are added in the configuration's order: module m is config.modules[m].
  process p = make_process(config, timing_options{wait_mode::as_configured, time_scale, 1});
  p.finalize();
  std::vector<std::uint64_t> hashes;
  hashes.reserve(config.modules.size());
  for (const module_config& m : config.modules) hashes.push_back(detail::hash_label(m.label));
  const module_costs costs{
      [&](std::uint32_t m, std::uint64_t e) { return detail::module_seconds(config.modules[m], hashes[m], e) * time_scale; },
      [&](std::uint32_t m, std::uint64_t e) { return detail::filter_result(config.modules[m], e) != 0; }};
  return analyse_dependencies(p, costs, events);
}

}  // namespace heddle::fw
