// The built-in modules of the test framework's configurations: each spends its time for the event
// (busy-wait, sleep, or a timer that holds no thread) and gives a deterministic integer result.
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "heddle/algorithm/parallel_for.hpp"
#include "demo_rules.hpp"
#include "graph.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/waiting.hpp"
#include "module_types.hpp"

namespace heddle::fw {

namespace {

class demo_module final : public module {
 public:
  demo_module(const module_config& c, const detail::module_type& t, const timing_options& timing, double busy_scale)
      : config_(c), type_(t), time_scale_(timing.time_scale), busy_scale_(busy_scale), hash_(detail::hash_label(c.label)) {
    if (t.how == detail::spend::nothing) how_ = how::nothing;
    else if (timing.wait == wait_mode::timer) how_ = how::timer;
    else if (timing.wait == wait_mode::busy) how_ = how::busy;
    else if (timing.wait == wait_mode::sleep) how_ = how::sleep;
    else if (t.how == detail::spend::busy) how_ = how::busy;
    else if (t.how == detail::spend::sleep) how_ = how::sleep;
    else how_ = how::timer;  // ExternalWork types wait through the timer engine
    ranges_ = t.parallel_for ? std::max(1u, c.n_ranges) : 1u;
  }

  bool external_work() const noexcept override { return how_ == how::timer; }

  double expected_seconds() const noexcept override {
    double s = config_.average_time;
    if (!config_.event_times.empty()) {
      s = 0;
      for (double t : config_.event_times) s += t;
      s /= double(config_.event_times.size());
    }
    return s * time_scale_;
  }

  void acquire(const event_view& e, async_handle h) override {
    // In timer mode the ranges of a parallel-for filter wait side by side: one wait of one range.
    const double s = seconds(e.number()) / ranges_;
    if (s <= 0) return h.done();
    h.done_at(std::chrono::steady_clock::now() +
              std::chrono::ceil<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s)));
  }

  std::int64_t produce(const event_view& e) override {
    if (how_ == how::busy || how_ == how::sleep) {
      const double s = seconds(e.number());
      if (ranges_ > 1) {
        heddle::parallel_for(0u, ranges_, [&](unsigned) { spend(s / ranges_); }, 1);
      } else {
        spend(s);
      }
    }
    if (type_.throws) throw std::runtime_error(std::string(type_.name) + " throws by design");
    switch (config_.role) {
      case module_role::filter:
        return detail::filter_result(config_, e.number());
      case module_role::producer:
        if (type_.fixed_value) return wrap_add(e.input_sum(), *config_.value);
        [[fallthrough]];
      case module_role::output:
        return wrap_add(e.input_sum(), static_cast<std::int64_t>(detail::mix(hash_ ^ detail::mix(e.number()))));
    }
    return 0;
  }

 private:
  enum class how : std::uint8_t { nothing, busy, sleep, timer };

  static std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  }

  // The module's time for `event`, scaled.
  double seconds(std::uint64_t event) const noexcept {
    return detail::module_seconds(config_, hash_, event) * time_scale_;
  }

  void spend(double s) const noexcept {
    if (how_ == how::busy) busy_wait(static_cast<std::uint64_t>(std::llround(s * busy_scale_)));
    else sleep_seconds(s);
  }

  module_config config_;
  const detail::module_type& type_;
  double time_scale_;
  double busy_scale_;
  std::uint64_t hash_;
  how how_;
  unsigned ranges_ = 1;
};

}  // namespace

process make_process(const process_config& config, const timing_options& timing) {
  process p(config.file.empty() ? "process" : config.file);
  const double busy_scale = timing.busy_wait_scale > 0 ? timing.busy_wait_scale : config.busy_wait_scale;
  for (const module_config& c : config.modules) {
    const detail::module_type* t = detail::find_module_type(c.type);
    if (!t) throw config_error(p.source() + ": " + c.where + " '" + c.label + "': unknown module type '" + c.type + "'");
    module_decl d;
    d.label = c.label;
    d.role = c.role;
    d.threads = c.threads;
    d.inputs = c.to_get;
    d.select_paths = c.select_paths;
    d.product_label = c.product_label;
    d.type = c.type;
    d.where = c.where;
    p.add_module(std::move(d), std::make_unique<demo_module>(c, *t, timing, busy_scale));
  }
  for (const path_config& path : config.paths) p.add_path(path.name, path.labels);
  for (const path_config& path : config.end_paths) p.add_end_path(path.name, path.labels);
  return p;
}

}  // namespace heddle::fw
