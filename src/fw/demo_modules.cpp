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

#include "heddle/algorithm/parallel_for.hpp"
#include "demo_rules.hpp"
#include "graph.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/fw/parameter_set.hpp"
#include "heddle/fw/plugins.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/registry.hpp"
#include "heddle/fw/waiting.hpp"
#include "module_types.hpp"

namespace heddle::fw {

namespace {

module_kind kind_of(thread_type t) noexcept {
  return t == thread_type::safe_between_instances ? module_kind::global : module_kind::one;
}

bool waits_on_timer(const detail::module_type& t, wait_mode w) noexcept {
  if (t.how == detail::spend::nothing) return false;
  return w == wait_mode::timer || (w == wait_mode::as_configured && t.how == detail::spend::acquire);
}

class demo_module final : public module_base {
 public:
  demo_module(const module_config& c, const detail::module_type& t, const timing_options& timing, double busy_scale)
      : module_base(kind_of(c.threads), c.role, waits_on_timer(t, timing.wait)),
        config_(c),
        type_(t),
        time_scale_(timing.time_scale),
        busy_scale_(busy_scale),
        hash_(detail::hash_label(c.label)) {
    for (const product_request& r : c.to_get) inputs_.push_back(consumes<std::int64_t>(input_tag(r.label, r.product)));
    if (c.role == module_role::producer) product_ = produces<std::int64_t>(c.product_label);
    if (c.threads == thread_type::unsafe) declare_resource(detail::legacy_resource);
    if (t.how == detail::spend::nothing) how_ = how::nothing;
    else if (timing.wait == wait_mode::timer) how_ = how::timer;
    else if (timing.wait == wait_mode::busy) how_ = how::busy;
    else if (timing.wait == wait_mode::sleep) how_ = how::sleep;
    else if (t.how == detail::spend::busy) how_ = how::busy;
    else if (t.how == detail::spend::sleep) how_ = how::sleep;
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
        heddle::parallel_for(0u, ranges_, [&](unsigned) { spend(s / ranges_); }, 1);
      } else {
        spend(s);
      }
    }
    if (type_.throws) throw std::runtime_error(std::string(type_.name) + " throws by design");
    std::int64_t sum = 0;  // read even where unused: a module reads what it declares
    for (const get_token<std::int64_t>& in : inputs_) sum = wrap_add(sum, e.get(in));
    if (config_.role == module_role::filter) return detail::filter_result(config_, number) != 0;
    if (config_.role == module_role::producer)
      e.emplace(product_, wrap_add(sum, type_.fixed_value ? *config_.value
                                                          : static_cast<std::int64_t>(detail::mix(hash_ ^ detail::mix(number)))));
    return true;
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
  std::vector<get_token<std::int64_t>> inputs_;
  put_token<std::int64_t> product_;
};

}  // namespace

namespace {

std::string known_types_line() {
  std::string s;
  for (const auto& t : known_module_types()) s += (s.empty() ? "" : ", ") + t;
  return s;
}

// Every key of a registered type's entry is a parameter it reads: another is an error.
void check_all_read(const parameter_set& parameters, const std::string& named, const std::string& type) {
  const std::vector<std::string> unread = parameters.unread();
  if (unread.empty()) return;
  std::string list;
  for (const std::string& u : unread) list += (list.empty() ? "'" : ", '") + u + "'";
  throw config_error(named + ": unknown parameter" + (unread.size() > 1 ? "s " : " ") + list + " (type " + type + " does not read " +
                     (unread.size() > 1 ? "them)" : "it)"));
}

// The registered type `c.type`, from `plugins` (or the program's registrations alone); nullopt if
// none registers it. A loader's other errors (a clash, a library that does not load) name `named`.
std::optional<registered_module> lookup(const std::string& named, const module_config& c, plugin_loader* plugins) {
  try {
    return plugins ? plugins->lookup(c.type) : find_registered_module(c.type);
  } catch (const config_error& x) {
    throw config_error(named + ": " + x.what());
  }
}

// Where an unknown type was looked for.
std::string searched_line(const plugin_loader* plugins) {
  return "searched " + (plugins ? plugins->searched() : std::string("the program")) + "; --plugin-path and " +
         plugin_loader::path_variable + " add directories";
}

// A registered type's module, from `plugins` (or the program's registrations alone), checked:
// the role its configuration list says, every parameter read.
void add_registered(process& p, const module_config& c, plugin_loader* plugins) {
  const std::string named = p.source() + ": " + c.where + " '" + c.label + "'";
  const std::optional<registered_module> found = lookup(named, c, plugins);
  if (!found)
    throw config_error(named + ": unknown module type '" + c.type + "' (built in: " + known_types_line() + "; " +
                       searched_line(plugins) + ")");
  if (!found->make)
    throw config_error(named + ": type " + c.type + " is a condition producer: it belongs among the esProducers");
  const parameter_set parameters = *c.parameters;
  module_base* m = nullptr;
  try {
    m = &p.add_module({c.label, c.type, c.where, c.select_paths}, [make = found->make, parameters] { return make(parameters); });
  } catch (const config_error&) {
    throw;  // a parameter_error names the module and the parameter already
  } catch (...) {
    throw config_error(named + ": type " + c.type + ": constructor failed: " +
                       core_detail::exception_text(std::current_exception()));
  }
  if (m->role() != c.role)
    throw config_error(named + ": type " + c.type + " is " + (m->role() == module_role::analyzer || m->role() == module_role::output ? "an " : "a ") +
                       to_string(m->role()) + ", listed among the " + to_string(c.role) + "s");
  check_all_read(parameters, named, c.type);
}

// A registered condition producer type's producer.
void add_registered_es(process& p, const module_config& c, plugin_loader* plugins) {
  const std::string named = p.source() + ": " + c.where + " '" + c.label + "'";
  const std::optional<registered_module> found = lookup(named, c, plugins);
  if (!found) throw config_error(named + ": unknown condition producer type '" + c.type + "' (" + searched_line(plugins) + ")");
  if (!found->make_es) throw config_error(named + ": type " + c.type + " is a module, not a condition producer");
  const parameter_set& parameters = *c.parameters;
  try {
    p.add_es_producer({c.label, c.type, c.where, {}}, found->make_es(parameters));
  } catch (const config_error&) {
    throw;
  } catch (...) {
    throw config_error(named + ": type " + c.type + ": constructor failed: " + core_detail::exception_text(std::current_exception()));
  }
  check_all_read(parameters, named, c.type);
}

}  // namespace

process make_process(const process_config& config, const timing_options& timing, plugin_loader* plugins) {
  process p(config.file.empty() ? "process" : config.file);
  const double busy_scale = timing.busy_wait_scale > 0 ? timing.busy_wait_scale : config.busy_wait_scale;
  for (const module_config& c : config.modules) {
    if (c.parameters) {
      add_registered(p, c, plugins);
      continue;
    }
    const detail::module_type* t = detail::find_module_type(c.type);
    if (!t) throw config_error(p.source() + ": " + c.where + " '" + c.label + "': unknown module type '" + c.type + "'");
    if (!(busy_scale > 0))
      throw config_error(p.source() + ": " + c.where + " '" + c.label + "': a timing module needs process.options.busyWaitScaleFactor " +
                         "(busy-wait iterations per second: heddle-fw calibrate measures it) or --busy-wait-scale");
    p.add_module({c.label, c.type, c.where, c.select_paths},
                 [c, t, timing, busy_scale] { return std::make_unique<demo_module>(c, *t, timing, busy_scale); });
  }
  for (const module_config& c : config.es_producers) add_registered_es(p, c, plugins);
  if (!config.conditions_file.empty()) p.set_conditions(conditions::from_json_file(config.conditions_file));
  for (const path_config& path : config.paths) p.add_path(path.name, path.labels);
  for (const path_config& path : config.end_paths) p.add_end_path(path.name, path.labels);
  return p;
}

}  // namespace heddle::fw
