// The dependency bound: the framework's scheduling rules replayed on a clock with unlimited threads.
#include "heddle/fw/analysis.hpp"

#include <algorithm>
#include <functional>
#include <queue>

#include "graph.hpp"
#include "heddle/fw/process.hpp"
#include "module_time.hpp"
#include "run_steps.hpp"

namespace heddle::fw {

double dependency_bound::work_s() const noexcept {
  double s = 0;
  for (const event_cost& e : events) s += e.work_s;
  return s;
}

double dependency_bound::critical_path_s() const noexcept {
  double s = 0;
  for (const event_cost& e : events) s += e.critical_path_s;
  return s;
}

double dependency_bound::speedup(unsigned threads, std::uint64_t in_flight) const noexcept {
  if (events.empty() || threads == 0 || in_flight == 0) return 0;
  const double work = work_s(), t = threads;
  double makespans = 0;
  for (const event_cost& e : events) makespans += std::max(e.critical_path_s, e.work_s / t);
  const double time = std::max(work / t, makespans / double(std::min<std::uint64_t>(in_flight, events.size())));
  return time > 0 ? work / time : t;
}

dependency_bound analyse_dependencies(const process_config& config, double time_scale, std::uint64_t events) {
  // The process checks the configuration and resolves its labels; its modules are not run.
  process p = make_process(config, timing_options{wait_mode::as_configured, time_scale, 1});
  p.finalize();
  const detail::graph& g = p.graph();
  const std::uint32_t n = g.size();
  // Consumers of each module (module index), and path steps waiting on each filter.
  std::vector<std::vector<std::uint32_t>> consumers(n);
  for (std::uint32_t m = 0; m < n; ++m)
    for (std::uint32_t q : g.nodes[m].producers) consumers[q].push_back(m);

  dependency_bound bound;
  bound.events.reserve(events);
  std::vector<double> seconds(n);
  std::vector<std::uint8_t> requested(n), done(n);
  std::vector<std::uint32_t> pending(n);
  std::vector<std::int64_t> result(n);
  std::vector<std::uint8_t> passed(g.paths.size());
  std::vector<std::size_t> position(g.paths.size());
  std::vector<std::vector<std::uint32_t>> waiting_paths(n);  // paths waiting on a filter
  using finish = std::pair<double, std::uint32_t>;

  for (std::uint64_t e = 0; e < events; ++e) {
    for (std::uint32_t m = 0; m < n; ++m)
      seconds[m] = detail::module_seconds(config.modules[m], g.nodes[m].hash, e) * time_scale;
    std::fill(requested.begin(), requested.end(), 0);
    std::fill(done.begin(), done.end(), 0);
    for (auto& w : waiting_paths) w.clear();
    std::priority_queue<finish, std::vector<finish>, std::greater<>> running;
    double work = 0, now = 0;
    std::size_t paths_left = g.paths.size();

    std::function<void(std::uint32_t)> request = [&](std::uint32_t m) {
      if (requested[m]) return;
      requested[m] = 1;
      pending[m] = 0;
      for (std::uint32_t q : g.nodes[m].producers) {
        request(q);
        pending[m] += !done[q];
      }
      if (pending[m] == 0) running.push({now + seconds[m], m});
    };
    // Path `i` goes on from its position; a filter's decision is its pass pattern's.
    auto advance = [&](std::size_t i) {
      const auto& members = g.paths[i].members;
      while (position[i] < members.size()) {
        const std::uint32_t f = members[position[i]];
        request(f);
        if (!done[f]) return waiting_paths[f].push_back(static_cast<std::uint32_t>(i));
        if (result[f] == 0) break;
        ++position[i];
      }
      passed[i] = position[i] == members.size();
      --paths_left;
    };
    auto decide = [&](std::uint32_t m) {
      const module_config& c = config.modules[m];
      result[m] = c.role != module_role::filter || c.pass.empty() || c.pass[e % c.pass.size()];
    };

    std::fill(position.begin(), position.end(), 0);
    std::fill(passed.begin(), passed.end(), 0);
    for (std::size_t i = 0; i < g.paths.size(); ++i) advance(i);
    bool outputs_started = false;
    for (;;) {
      if (paths_left == 0 && !outputs_started) {
        outputs_started = true;
        for (std::uint32_t out : g.outputs)
          if (detail::selected(g.nodes[out], passed.data())) request(out);
      }
      if (running.empty()) break;
      auto [t, m] = running.top();
      running.pop();
      now = t;
      done[m] = 1;
      work += seconds[m];
      decide(m);
      for (std::uint32_t c : consumers[m])
        if (requested[c] && !done[c] && --pending[c] == 0) running.push({now + seconds[c], c});
      for (std::uint32_t i : waiting_paths[m]) {
        if (result[m] == 0) {
          --paths_left;
          continue;
        }
        ++position[i];
        advance(i);
      }
      waiting_paths[m].clear();
    }
    bound.events.push_back({work, now});
  }
  return bound;
}

}  // namespace heddle::fw
