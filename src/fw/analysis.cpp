// SPDX-License-Identifier: Apache-2.0
// The dependency bound: the framework's scheduling rules replayed on a clock with unlimited threads.
#include "heddle/fw/analysis.hpp"

#include <algorithm>
#include <queue>
#include <utility>
#include <vector>

#include "graph.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/timeline.hpp"
#include "path_rule.hpp"

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

namespace {

// Events replayed one at a time with unlimited threads: a module starts as soon as it is asked
// for and its producers are done, and takes its time; paths step as path_rule.hpp says, on the
// filters' decisions, each module costing what `source` (module_costs, which outlives the replay)
// says.
class replay {
 public:
  replay(const module_costs& source, const fw_detail::graph& g)
      : source_(source),
        g_(g),
        consumers_(g.size()),
        seconds_(g.size()),
        requested_(g.size()),
        done_(g.size()),
        pending_(g.size()),
        result_(g.size()),
        passed_(g.paths.size()),
        waiting_(g.size()) {
    for (std::uint32_t m = 0; m < g.size(); ++m)
      for (std::uint32_t q : g.nodes[m].producers) consumers_[q].push_back(m);
  }

  event_cost run(std::uint64_t e) {
    for (std::uint32_t m = 0; m < g_.size(); ++m) seconds_[m] = source_.seconds(m, e);
    std::fill(requested_.begin(), requested_.end(), 0);
    std::fill(done_.begin(), done_.end(), 0);
    std::fill(passed_.begin(), passed_.end(), 0);
    for (auto& w : waiting_) w.clear();
    running_ = {};
    now_ = 0;
    paths_left_ = g_.paths.size();
    double work = 0;

    for (std::uint32_t p = 0; p < g_.paths.size(); ++p)
      path_stepped(p, fw_detail::step_path(g_.paths[p], 0, path_walker{*this, p}));
    bool outputs_started = false;
    for (;;) {
      if (paths_left_ == 0 && !outputs_started) {
        outputs_started = true;
        for (std::uint32_t out : g_.outputs)
          if (fw_detail::selected(g_.nodes[out], passed_.data())) request(out);
      }
      if (running_.empty()) break;
      const auto [t, m] = running_.top();
      running_.pop();
      now_ = t;
      done_[m] = 1;
      work += seconds_[m];
      result_[m] = g_.nodes[m].role() != module_role::filter || source_.passes(m, e);
      for (std::uint32_t q : consumers_[m])
        if (requested_[q] && !done_[q] && --pending_[q] == 0) start(q);
      // The paths that wait on m step on; none comes to wait on m again (m is done).
      for (const auto& [p, k] : waiting_[m])
        path_stepped(p, fw_detail::resume_path(g_.paths[p], k, result_[m], path_walker{*this, p}));
      waiting_[m].clear();
    }
    return {work, now_};
  }

 private:
  // Path p of the event: a filter has decided once it is done; one that is not yet goes on with
  // the path when it is (run()).
  struct path_walker {
    replay& r;
    std::uint32_t p;
    void ask(std::uint32_t f) { r.request(f); }
    bool decided(std::uint32_t f, std::uint32_t k) {
      if (r.done_[f]) return true;
      r.waiting_[f].push_back({p, k});
      return false;
    }
    bool passes(std::uint32_t f) const noexcept { return r.result_[f]; }
  };

  void path_stepped(std::uint32_t p, fw_detail::path_state s) {
    if (s == fw_detail::path_state::waiting) return;
    passed_[p] = s == fw_detail::path_state::passed;
    --paths_left_;
  }

  // Asks for m and, first, its producers; m starts once they are done.
  void request(std::uint32_t m) {
    if (requested_[m]) return;
    requested_[m] = 1;
    pending_[m] = 0;
    for (std::uint32_t q : g_.nodes[m].producers) {
      request(q);
      pending_[m] += !done_[q];
    }
    if (pending_[m] == 0) start(m);
  }
  void start(std::uint32_t m) { running_.push({now_ + seconds_[m], m}); }

  using finish = std::pair<double, std::uint32_t>;  // when a running module is done

  const module_costs& source_;
  const fw_detail::graph& g_;
  std::vector<std::vector<std::uint32_t>> consumers_;  // per module, the modules that get its product
  std::vector<double> seconds_;                        // per module, its time for this event
  std::vector<std::uint8_t> requested_, done_;
  std::vector<std::uint32_t> pending_;  // per requested module, its producers not done yet
  std::vector<std::uint8_t> result_;    // per module, whether it passes the event
  std::vector<std::uint8_t> passed_;    // per path
  // Per filter not done yet, the paths that wait on it: (path, its position there).
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> waiting_;
  std::priority_queue<finish, std::vector<finish>, std::greater<>> running_;
  double now_ = 0;
  std::size_t paths_left_ = 0;
};

}  // namespace

dependency_bound analyse_dependencies(const process& p, const module_costs& costs, std::uint64_t events) {
  const fw_detail::graph& g = fw_detail::graph_of(p);
  replay r(costs, g);
  dependency_bound bound;
  bound.events.reserve(events);
  for (std::uint64_t e = 0; e < events; ++e) bound.events.push_back(r.run(e));
  return bound;
}

dependency_bound analyse_dependencies(const process& p, const timeline& recorded, std::uint64_t events) {
  const fw_detail::graph& g = fw_detail::graph_of(p);
  // seconds[e][m]: the module's executions for the event, summed.
  std::vector<std::vector<double>> seconds(events, std::vector<double>(g.size(), 0.0));
  for (const timeline_entry& t : recorded.entries())
    if (t.event < events && t.module < g.size()) seconds[t.event][t.module] += double(t.end_ns - t.start_ns) * 1e-9;
  return analyse_dependencies(p,
                              module_costs{[&](std::uint32_t m, std::uint64_t e) { return seconds[e][m]; },
                                           [](std::uint32_t, std::uint64_t) { return true; }},
                              events);
}

}  // namespace heddle::fw
