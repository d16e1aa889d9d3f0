// SPDX-License-Identifier: Apache-2.0
// Reading a timing module's entry: one table of its keys (name, whether required, how the value is
// read, and which types take it), read with the configuration reader's own key tables
// (config_keys.hpp), so that a timing module's keys are checked and worded as the framework's are.
#include <span>
#include <stdexcept>

#include "heddle/fw/detail/config_keys.hpp"
#include "heddle/fw/detail/parameter_set_json.hpp"
#include "study.hpp"

namespace heddle::fw::study {

namespace {

using json = nlohmann::json;
using fw_detail::array;
using fw_detail::boolean;
using fw_detail::count;
using fw_detail::key;
using fw_detail::kind;
using fw_detail::object;
using fw_detail::place;
using fw_detail::read_keys;
using fw_detail::seconds;
using fw_detail::string;

thread_type parse_thread_type(const json& v, const place& p) {
  const std::string s = string(v, p);
  if (s == "ThreadSafeBetweenInstances") return thread_type::safe_between_instances;
  if (s == "ThreadSafeBetweenModules") return thread_type::safe_between_modules;
  if (s == "ThreadUnsafe") return thread_type::unsafe;
  p.fail("unknown threadType '" + s + "' (known: ThreadSafeBetweenInstances, ThreadSafeBetweenModules, ThreadUnsafe)");
}

// An entry of toGet.
const key<product_request> to_get_keys[] = {
    {"label", true, [](const json& v, const place& p, product_request& r) { r.label = string(v, p); }},
    {"product", false, [](const json& v, const place& p, product_request& r) { r.product = string(v, p); }},
};

// A timing module's keys: each row applies to the types `applies` accepts. "@label", "@type" and
// selectEvents are read by the framework (its configuration reader); they are listed for the
// message that names the keys a type takes.
struct module_key {
  key<module_settings> k;
  bool (*applies)(const module_type&);
};
constexpr bool every(const module_type&) { return true; }
const module_key module_keys[] = {
    {{"@label"}, every},
    {{"@type"}, every},
    {{"threadType", false,
      [](const json& v, const place& p, module_settings& m) { m.threads = parse_thread_type(v, p); }},
     every},
    {{"toGet", false,
      [](const json& v, const place& p, module_settings& m) {
        const json& list = array(v, p);
        for (std::size_t i = 0; i < list.size(); ++i) {
          const place pi = p.at(i);
          product_request r;
          read_keys(object(list[i], pi), pi, std::span<const key<product_request>>(to_get_keys), r);
          m.to_get.push_back(std::move(r));
        }
      }},
     every},
    {{"averageTime", true, [](const json& v, const place& p, module_settings& m) { m.average_time = seconds(v, p); }},
     [](const module_type& t) { return t.times == time_key::average; }},
    {{"minTime", false, [](const json& v, const place& p, module_settings& m) { m.min_time = seconds(v, p); }},
     [](const module_type& t) { return t.times == time_key::average; }},
    {{"maxTime", false, [](const json& v, const place& p, module_settings& m) { m.max_time = seconds(v, p); }},
     [](const module_type& t) { return t.times == time_key::average; }},
    {{"eventTimes", true,
      [](const json& v, const place& p, module_settings& m) {
        const json& list = array(v, p);
        if (list.empty()) p.fail("empty list: at least one time is needed");
        m.event_times.reserve(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) m.event_times.push_back(seconds(list[i], p.at(i)));
      }},
     [](const module_type& t) { return t.times == time_key::event_times; }},
    {{"nRanges", false,
      [](const json& v, const place& p, module_settings& m) {
        m.n_ranges = static_cast<unsigned>(std::min<std::uint64_t>(count(v, p, 1), 1u << 20));
      }},
     [](const module_type& t) { return t.parallel_for; }},
    {{"productLabel", false, [](const json& v, const place& p, module_settings& m) { m.product_label = string(v, p); }},
     [](const module_type& t) { return t.role == module_role::producer; }},
    {{"value", true,
      [](const json& v, const place& p, module_settings& m) {
        if (!v.is_number_integer()) p.fail(std::string("expected an integer, found ") + kind(v));
        m.value = v.get<std::int64_t>();
      }},
     [](const module_type& t) { return t.fixed_value; }},
    {{"pass", false,
      [](const json& v, const place& p, module_settings& m) {
        const json& list = array(v, p);
        if (list.empty()) p.fail("empty list: at least one decision is needed");
        for (std::size_t i = 0; i < list.size(); ++i) m.pass.push_back(boolean(list[i], p.at(i)));
      }},
     [](const module_type& t) { return t.role == module_role::filter; }},
    {{"selectEvents"}, [](const module_type& t) { return t.role == module_role::output; }},
};

const char* article(module_role r) noexcept {
  return r == module_role::output || r == module_role::analyzer ? "an " : "a ";
}

}  // namespace

const char* to_string(thread_type t) noexcept {
  switch (t) {
    case thread_type::safe_between_instances: return "ThreadSafeBetweenInstances";
    case thread_type::safe_between_modules: return "ThreadSafeBetweenModules";
    case thread_type::unsafe: return "ThreadUnsafe";
  }
  return "?";
}

bool is_timing_type(std::string_view type) noexcept { return find_module_type(type) != nullptr; }

module_settings read_settings(const module_type& t, const parameter_set& parameters, const module_context& context) {
  const place p{context.file, context.where, context.label, ""};
  if (t.role != context.listed)
    p.at("@type").fail("'" + std::string(t.name) + "' is " + article(t.role) + to_string(t.role) + " type, not " +
                       article(context.listed) + to_string(context.listed));
  // The parameters as the file gave them: the reader's tables word every error as the framework's
  // own keys' errors are worded, with the key's path in the entry.
  const json& entry = fw_detail::json_of(parameters);
  std::vector<key<module_settings>> keys;  // the keys this type takes; any other is reported
  for (const auto& [k, applies] : module_keys)
    if (applies(t)) keys.push_back(k);
  module_settings s;
  s.type = &t;
  read_keys(entry, p, std::span<const key<module_settings>>(keys), s, t.name);
  if (s.min_time && *s.min_time > s.average_time) p.at("minTime").fail("minTime is above averageTime");
  if (s.max_time && *s.max_time < s.average_time) p.at("maxTime").fail("maxTime is below averageTime");
  for (const auto& [name, value] : entry.items()) (void)parameters.exists(name);  // read: none is unknown
  return s;
}

module_settings settings_of(const process_config& config, const module_config& entry) {
  const module_type* t = find_module_type(entry.type);
  if (!t) throw std::invalid_argument("heddle::fw::study::settings_of: '" + entry.type + "' is not a timing type");
  const std::string named = config.file + ": " + entry.where + " '" + entry.label + "'";
  return read_settings(*t, entry.parameters,
                       module_context{entry.role, config.options, named, config.file, entry.where, entry.label});
}

}  // namespace heddle::fw::study
