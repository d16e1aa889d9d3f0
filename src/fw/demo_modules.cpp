// SPDX-License-Identifier: Apache-2.0
// The built-in modules of the test framework's configurations: each spends its time for the event
// (busy-wait, sleep, or a timer that holds no thread) and makes a deterministic integer product
// (std::int64_t) from the products it reads, or, as a filter, decides by its pass pattern.
//
// One class serves every kind a configuration's threadType picks (global:: for
// ThreadSafeBetweenInstances, one:: for ThreadSafeBetweenModules, one:: on the legacy resource for
// ThreadUnsafe) and every role, so it derives from module_base itself and implements the event
// call that the kinds of global.hpp and one.hpp implement for user modules: its code is safe for
// any number of concurrent calls, so the kind only decides how the framework serialises it.
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "config_keys.hpp"
#include "demo_rules.hpp"
#include "graph.hpp"
#include "heddle/algorithm/parallel_for.hpp"
#include "heddle/fw/parameter_set.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/waiting.hpp"
#include "module_types.hpp"
#include "study_modules.hpp"

namespace heddle::fw {

namespace {

// The process options the timing modules read (config_keys.hpp, added_option): the framework's
// reader checks them and keeps them in process_config::options.
const fw_detail::option_registration busy_wait_scale_option{
    {"busyWaitScaleFactor", "nSimultaneousEvents",
     [](const fw_detail::json& v, const fw_detail::place& p) { (void)fw_detail::positive(v, p); }}};
const fw_detail::option_registration time_scale_option{
    {"timeScale", "nThreads",
     [](const fw_detail::json& v, const fw_detail::place& p) { (void)fw_detail::positive(v, p); }}};
const fw_detail::option_registration wait_option{
    {"wait", "timeScale", [](const fw_detail::json& v, const fw_detail::place& p) {
       const std::string w = fw_detail::string(v, p);
       if (!parse_wait_mode(w)) p.fail("unknown wait mode '" + w + "' (known: busy, sleep, timer, configured)");
     }}};

module_kind kind_of(thread_type t) noexcept {
  return t == thread_type::safe_between_instances ? module_kind::global : module_kind::one;
}

bool waits_on_timer(const fw_detail::module_type& t, wait_mode w) noexcept {
  if (t.how == fw_detail::spend::nothing) return false;
  return w == wait_mode::timer || (w == wait_mode::as_configured && t.how == fw_detail::spend::acquire);
}

class demo_module final : public module_base, public fw_detail::timing_module {
 public:
  demo_module(const module_config& c, const fw_detail::module_type& t, const timing_options& timing, double busy_scale)
      : module_base(kind_of(c.threads), c.role, waits_on_timer(t, timing.wait)),
        config_(c),
        type_(t),
        time_scale_(timing.time_scale),
        busy_scale_(busy_scale),
        hash_(fw_detail::hash_label(c.label)) {
    for (const product_request& r : c.to_get) inputs_.push_back(consumes<std::int64_t>(input_tag(r.label, r.product)));
    if (c.role == module_role::producer) product_ = produces<std::int64_t>(c.product_label);
    if (c.threads == thread_type::unsafe) declare_resource(fw_detail::legacy_resource);
    if (t.how == fw_detail::spend::nothing) how_ = how::nothing;
    else if (timing.wait == wait_mode::timer) how_ = how::timer;
    else if (timing.wait == wait_mode::busy) how_ = how::busy;
    else if (timing.wait == wait_mode::sleep) how_ = how::sleep;
    else if (t.how == fw_detail::spend::busy) how_ = how::busy;
    else if (t.how == fw_detail::spend::sleep) how_ = how::sleep;
    else how_ = how::timer;  // ExternalWork types wait through the timer engine
    ranges_ = t.parallel_for ? std::max(1u, c.n_ranges) : 1u;
  }

  double expected_seconds() const noexcept override {
    double s = config_.average_time;
    if (!config_.event_times.empty()) {
      s = 0;
      for (double t : config_.event_times) s += t;
      s /= double(config_.event_times.size());
    }
    return s * time_scale_;
  }

  double seconds_for(std::uint64_t event) const noexcept override { return seconds(event); }
  bool passes(std::uint64_t event) const noexcept override {
    return config_.role != module_role::filter || fw_detail::filter_result(config_, event) != 0;
  }

  void call_acquire(const event& e, const event_setup&, async_handle h) override {
    // In timer mode the ranges of a parallel-for filter wait side by side: one wait of one range.
    const double s = seconds(e.id().event) / ranges_;
    if (s <= 0) return h.done();
    h.done_at(std::chrono::steady_clock::now() +
              std::chrono::ceil<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s)));
  }

  bool call(event& e, const event_setup&) override {
    const std::uint64_t number = e.id().event;
    if (how_ == how::busy || how_ == how::sleep) {
      const double s = seconds(number);
      if (ranges_ > 1) {
        heddle::parallel_for(
            0u, ranges_, [&](unsigned) { spend(s / ranges_); }, 1);
      } else {
        spend(s);
      }
    }
    if (type_.throws) throw std::runtime_error(std::string(type_.name) + " throws by design");
    std::int64_t sum = 0;  // read even where unused: a module reads what it declares
    for (const get_token<std::int64_t>& in : inputs_) sum = wrap_add(sum, e.get(in));
    if (config_.role == module_role::filter) return fw_detail::filter_result(config_, number) != 0;
    if (config_.role == module_role::producer)
      e.emplace(product_,
                wrap_add(sum, type_.fixed_value
                                  ? *config_.value
                                  : static_cast<std::int64_t>(fw_detail::mix(hash_ ^ fw_detail::mix(number)))));
    return true;
  }

 private:
  enum class how : std::uint8_t { nothing, busy, sleep, timer };

  static std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  }

  // The module's time for `event`, scaled.
  double seconds(std::uint64_t event) const noexcept {
    return fw_detail::module_seconds(config_, hash_, event) * time_scale_;
  }

  void spend(double s) const noexcept {
    if (how_ == how::busy) busy_wait(static_cast<std::uint64_t>(std::llround(s * busy_scale_)));
    else sleep_seconds(s);
  }

  module_config config_;
  const fw_detail::module_type& type_;
  double time_scale_;
  double busy_scale_;
  std::uint64_t hash_;
  how how_;
  unsigned ranges_ = 1;
  std::vector<get_token<std::int64_t>> inputs_;
  put_token<std::int64_t> product_;
};

}  // namespace

}  // namespace heddle::fw

namespace heddle::fw_detail {

fw::module_factory study_module_factory(const fw::module_config& c, const fw::timing_options& timing,
                                        const parameter_set& options, const std::string& named) {
  const module_type* t = find_module_type(c.type);
  if (!t) throw config_error(named + ": unknown module type '" + c.type + "'");
  const double busy_scale = timing.busy_wait_scale > 0 ? timing.busy_wait_scale
                                                       : options.get<double>("busyWaitScaleFactor", 0.0);
  if (!(busy_scale > 0))
    throw config_error(named + ": a timing module needs process.options.busyWaitScaleFactor " +
                       "(busy-wait iterations per second: heddle-fw calibrate measures it) or --busy-wait-scale");
  return [c, t, timing, busy_scale] { return std::make_unique<fw::demo_module>(c, *t, timing, busy_scale); };
}

}  // namespace heddle::fw_detail
