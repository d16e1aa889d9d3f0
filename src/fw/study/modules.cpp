// SPDX-License-Identifier: Apache-2.0
// The study's timing modules: each spends its time for the event (busy-wait, sleep, or a timer that
// holds no thread) and makes a deterministic integer product (std::int64_t) from the products it
// reads, or, as a filter, decides by its pass pattern. Registered as any plugin's types are, each
// of the 23 types under its name and under "demo::NAME".
//
// One class serves every kind a configuration's threadType picks (global:: for
// ThreadSafeBetweenInstances, one:: for ThreadSafeBetweenModules, one:: on the legacy resource for
// ThreadUnsafe) and every role, so it derives from module_base itself and implements the event
// call that the kinds of global.hpp and one.hpp implement for user modules: its code is safe for
// any number of concurrent calls, so the kind only decides how the framework serialises it.
#include <chrono>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <utility>

#include "heddle/algorithm/parallel_for.hpp"
#include "heddle/fw/digest.hpp"
#include "heddle/fw/parameter_set.hpp"
#include "heddle/fw/registry.hpp"
#include "heddle/fw/waiting.hpp"
#include "rules.hpp"
#include "study.hpp"
#include "timing_module.hpp"

namespace heddle::fw::study {

namespace {

module_kind kind_of(thread_type t) noexcept {
  return t == thread_type::safe_between_instances ? module_kind::global : module_kind::one;
}

bool waits_on_timer(const module_type& t, wait_mode w) noexcept {
  if (t.how == spend::nothing) return false;
  return w == wait_mode::timer || (w == wait_mode::as_configured && t.how == spend::acquire);
}

// The busy-wait scale the module needs, from the process options; config_error naming the entry if
// a type that busy-waits has none.
double busy_scale_of(const timing_options& timing, const std::string& named) {
  if (!(timing.busy_wait_scale > 0))
    throw config_error(named + ": a timing module needs process.options.busyWaitScaleFactor " +
                       "(busy-wait iterations per second: heddle-fw calibrate measures it) or --busy-wait-scale");
  return timing.busy_wait_scale;
}

class timed_module final : public module_base, public timing_module {
 public:
  timed_module(const module_type& t, const parameter_set& parameters, const module_context& context)
      : timed_module(t, read_settings(t, parameters, context), timing_of(context.options), context) {}

  timed_module(const module_type& t, module_settings s, const timing_options& timing, const module_context& context)
      : module_base(kind_of(s.threads), t.role, waits_on_timer(t, timing.wait)),
        settings_(std::move(s)),
        time_scale_(timing.time_scale),
        busy_scale_(busy_scale_of(timing, context.named)),
        hash_(product_digest(context.label)) {
    for (const product_request& r : settings_.to_get)
      inputs_.push_back(consumes<std::int64_t>(input_tag(r.label, r.product)));
    if (t.role == module_role::producer) product_ = produces<std::int64_t>(settings_.product_label);
    if (settings_.threads == thread_type::unsafe) declare_resource(fw_detail::legacy_resource);
    if (t.how == spend::nothing) how_ = how::nothing;
    else if (timing.wait == wait_mode::timer) how_ = how::timer;
    else if (timing.wait == wait_mode::busy) how_ = how::busy;
    else if (timing.wait == wait_mode::sleep) how_ = how::sleep;
    else if (t.how == spend::busy) how_ = how::busy;
    else if (t.how == spend::sleep) how_ = how::sleep;
    else how_ = how::timer;  // ExternalWork types wait through the timer engine
    ranges_ = t.parallel_for ? std::max(1u, settings_.n_ranges) : 1u;
  }

  double expected_seconds() const noexcept override {
    double s = settings_.average_time;
    if (!settings_.event_times.empty()) {
      s = 0;
      for (double t : settings_.event_times) s += t;
      s /= double(settings_.event_times.size());
    }
    return s * time_scale_;
  }

  double seconds_for(std::uint64_t event) const noexcept override { return seconds(event); }
  bool passes(std::uint64_t event) const noexcept override {
    return type().role != module_role::filter || filter_result(settings_, event) != 0;
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
    if (type().throws) throw std::runtime_error(std::string(type().name) + " throws by design");
    std::int64_t sum = 0;  // read even where unused: a module reads what it declares
    for (const get_token<std::int64_t>& in : inputs_) sum = wrap_add(sum, e.get(in));
    if (type().role == module_role::filter) return filter_result(settings_, number) != 0;
    if (type().role == module_role::producer)
      e.emplace(product_, wrap_add(sum, type().fixed_value ? *settings_.value
                                                           : static_cast<std::int64_t>(fw_detail::digest_mix(
                                                                 hash_ ^ fw_detail::digest_mix(number)))));
    return true;
  }

 private:
  enum class how : std::uint8_t { nothing, busy, sleep, timer };

  static std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  }

  const module_type& type() const noexcept { return *settings_.type; }  // read_settings sets it

  // The module's time for `event`, scaled.
  double seconds(std::uint64_t event) const noexcept { return module_seconds(settings_, hash_, event) * time_scale_; }

  void spend(double s) const noexcept {
    if (how_ == how::busy) busy_wait(static_cast<std::uint64_t>(std::llround(s * busy_scale_)));
    else sleep_seconds(s);
  }

  module_settings settings_;
  double time_scale_;
  double busy_scale_;
  std::uint64_t hash_;
  how how_;
  unsigned ranges_ = 1;
  std::vector<get_token<std::int64_t>> inputs_;
  put_token<std::int64_t> product_;
};

// Type I of module_types, as a registered type's maker (registry.hpp: a plain function each).
template <std::size_t I>
std::unique_ptr<module_base> make(const parameter_set& parameters, const module_context& context) {
  return std::make_unique<timed_module>(module_types[I], parameters, context);
}

// Every type, under its name and under "demo::NAME" (the study's configurations' spelling), for as
// long as the program (or the library linking this plugin) lives.
template <std::size_t... I>
std::deque<fw_detail::module_registration> register_all(std::index_sequence<I...>) {
  std::deque<fw_detail::module_registration> r;  // a deque: registrations neither copy nor move
  auto add = [&r](std::string_view name, module_maker maker) {
    r.emplace_back(std::string(name).c_str(), maker);
    r.emplace_back(("demo::" + std::string(name)).c_str(), maker);
  };
  (add(module_types[I].name, &make<I>), ...);
  return r;
}
const std::deque<fw_detail::module_registration> registrations =
    register_all(std::make_index_sequence<module_types.size()>());

}  // namespace

}  // namespace heddle::fw::study
