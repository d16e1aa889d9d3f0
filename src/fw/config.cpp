// Reading the configuration JSON (nlohmann-json). Every error is one line naming the file and
// where in it: line and column for syntax, the JSON path and the module's label for the rest.
#include "heddle/fw/config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>
#include <sstream>

#include "heddle/fw/process.hpp"
#include "module_types.hpp"
#include "json_position.hpp"
#include "parameter_set_json.hpp"

namespace heddle::fw {

namespace {

using json = nlohmann::json;

// Where in the file a value is, for messages: the JSON path, and inside a module its label and
// the key's path within it ("t.json: process.producers[3] 'alpha': eventTimes[7]: ...").
struct place {
  const std::string& file;
  std::string where;
  std::string label;
  std::string key;

  [[noreturn]] void fail(const std::string& what) const {
    std::string m = file + ": " + where;
    if (!label.empty()) m += " '" + label + "'";
    if (!key.empty()) m += ": " + key;
    throw config_error(m + ": " + what);
  }
  place at(const std::string& k) const {
    if (label.empty()) return {file, where + "." + k, label, key};
    return {file, where, label, key.empty() ? k : key + "." + k};
  }
  place at(std::size_t i) const {
    std::string index = "[";  // appended, not "[" + ... + "]": g++ 12 then warns (-Wrestrict) wrongly
    index += std::to_string(i);
    index += ']';
    if (label.empty()) return {file, where + index, label, key};
    return {file, where, label, key + index};
  }
};

const char* kind(const json& v) { return v.type_name(); }

// Every key of `obj` must be one of `known`; else "unknown key 'k' (known here: ...)", or with a
// module type's name, "key 'k' does not apply to type T (it takes: ...)".
void check_keys(const json& obj, const place& p, std::span<const std::string_view> known, std::string_view type = {}) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    if (type.empty()) p.fail("unknown key '" + key + "' (known here: " + list + ")");
    p.fail("key '" + key + "' does not apply to type " + std::string(type) + " (it takes: " + list + ")");
  }
}
void check_keys(const json& obj, const place& p, std::initializer_list<std::string_view> known) {
  check_keys(obj, p, std::span(known.begin(), known.size()));
}

const json& require(const json& obj, const char* key, const place& p) {
  auto it = obj.find(key);
  if (it == obj.end()) p.fail(std::string("missing required key '") + key + "'");
  return *it;
}

const json& object(const json& v, const place& p) {
  if (!v.is_object()) p.fail(std::string("expected an object, found ") + kind(v));
  return v;
}

const json& array(const json& v, const place& p) {
  if (!v.is_array()) p.fail(std::string("expected an array, found ") + kind(v));
  return v;
}

std::string string(const json& v, const place& p) {
  if (!v.is_string()) p.fail(std::string("expected a string, found ") + kind(v));
  return v.get<std::string>();
}

// A time in seconds: finite and not negative.
double seconds(const json& v, const place& p) {
  if (!v.is_number()) p.fail(std::string("expected a time in seconds, found ") + kind(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) p.fail("time is not finite");
  if (d < 0) p.fail("negative time " + v.dump());
  return d;
}

double positive(const json& v, const place& p) {
  if (!v.is_number()) p.fail(std::string("expected a number, found ") + kind(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0) p.fail("expected a positive number, found " + v.dump());
  return d;
}

// A count in [min, max]: a non-negative integer, or a string of one ("200", as some
// configurations write it).
std::uint64_t count(const json& v, const place& p, std::uint64_t min = 0, std::uint64_t max = UINT64_MAX) {
  std::uint64_t n = 0;
  if (v.is_number_unsigned()) {
    n = v.get<std::uint64_t>();
  } else if (v.is_number_integer()) {
    p.fail("expected a count, found " + v.dump());
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (d < 0 || d != std::floor(d) || d > 9e18) p.fail("expected a whole count, found " + v.dump());
    n = static_cast<std::uint64_t>(d);
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    std::size_t used = 0;
    try {
      if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) throw std::invalid_argument(s);
      n = std::stoull(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size()) p.fail("expected a count, found the string " + v.dump());
  } else {
    p.fail(std::string("expected a count, found ") + kind(v));
  }
  if (n < min) p.fail("expected at least " + std::to_string(min) + ", found " + std::to_string(n));
  if (n > max) p.fail("expected at most " + std::to_string(max) + ", found " + std::to_string(n));
  return n;
}

thread_type parse_thread_type(const json& v, const place& p) {
  const std::string s = string(v, p);
  if (s == "ThreadSafeBetweenInstances") return thread_type::safe_between_instances;
  if (s == "ThreadSafeBetweenModules") return thread_type::safe_between_modules;
  if (s == "ThreadUnsafe") return thread_type::unsafe;
  p.fail("unknown threadType '" + s + "' (known: ThreadSafeBetweenInstances, ThreadSafeBetweenModules, ThreadUnsafe)");
}

// A registered module type's entry (registry.hpp): its label, type, and for modules on end paths
// selectEvents; every other key is a parameter, which the module reads and the process checks
// (make_process: a key the module did not read is an unknown parameter).
module_config parse_registered(const json& v, const place& p, module_config m, std::string type, module_role role) {
  m.type = std::move(type);
  m.role = role;
  json parameters = v;
  parameters.erase("@label");
  parameters.erase("@type");
  if (auto it = v.find("selectEvents"); it != v.end() && (role == module_role::output || role == module_role::analyzer)) {
    const place ps = p.at("selectEvents");
    const json& list = array(*it, ps);
    for (std::size_t i = 0; i < list.size(); ++i) m.select_paths.push_back(string(list[i], ps.at(i)));
    parameters.erase("selectEvents");
  }
  m.parameters = detail::make_parameter_set(parameters, p.file + ": " + p.where + " '" + m.label + "'");
  return m;
}

module_config parse_module(const json& v, const place& where, module_role expected) {
  object(v, where);
  module_config m;
  m.where = where.where;
  {
    auto it = v.find("@label");
    if (it != v.end()) m.label = string(*it, where.at("@label"));
  }
  place p{where.file, where.where, m.label, ""};
  if (m.label.empty()) {
    if (v.find("@label") == v.end()) p.fail("missing required key '@label'");
    p.fail("empty '@label'");
  }
  std::string type = string(require(v, "@type", p), p.at("@type"));
  const detail::module_type* t = detail::find_module_type(type.rfind("demo::", 0) == 0 ? type.substr(6) : type);
  if (!t) return parse_registered(v, p, std::move(m), std::move(type), expected);
  if (type.rfind("demo::", 0) == 0) type.erase(0, 6);
  if (t->role != expected)
    p.at("@type").fail("'" + type + "' is " + (t->role == module_role::output ? "an " : "a ") + to_string(t->role) +
                       " type, not " + (expected == module_role::output ? "an " : "a ") + to_string(expected));
  m.type = type;
  m.role = t->role;

  // The keys this type takes; any other is reported.
  std::vector<std::string_view> keys = {"@label", "@type", "threadType", "toGet"};
  if (t->times == detail::time_key::average) keys.insert(keys.end(), {"averageTime", "minTime", "maxTime"});
  if (t->times == detail::time_key::event_times) keys.push_back("eventTimes");
  if (t->parallel_for) keys.push_back("nRanges");
  if (t->role == module_role::producer) keys.push_back("productLabel");
  if (t->fixed_value) keys.push_back("value");
  if (t->role == module_role::filter) keys.push_back("pass");
  if (t->role == module_role::output) keys.push_back("selectEvents");
  check_keys(v, p, keys, type);

  if (auto it = v.find("threadType"); it != v.end()) m.threads = parse_thread_type(*it, p.at("threadType"));
  if (auto it = v.find("toGet"); it != v.end()) {
    const place pg = p.at("toGet");
    const json& list = array(*it, pg);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const place pi = pg.at(i);
      object(list[i], pi);
      check_keys(list[i], pi, {"label", "product"});
      product_request r;
      r.label = string(require(list[i], "label", pi), pi.at("label"));
      if (auto pr = list[i].find("product"); pr != list[i].end()) r.product = string(*pr, pi.at("product"));
      m.to_get.push_back(std::move(r));
    }
  }
  if (t->times == detail::time_key::event_times) {
    const place pe = p.at("eventTimes");
    const json& list = array(require(v, "eventTimes", p), pe);
    if (list.empty()) pe.fail("empty list: at least one time is needed");
    m.event_times.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) m.event_times.push_back(seconds(list[i], pe.at(i)));
  }
  if (t->times == detail::time_key::average) {
    m.average_time = seconds(require(v, "averageTime", p), p.at("averageTime"));
    if (auto it = v.find("minTime"); it != v.end()) m.min_time = seconds(*it, p.at("minTime"));
    if (auto it = v.find("maxTime"); it != v.end()) m.max_time = seconds(*it, p.at("maxTime"));
    if (m.min_time && *m.min_time > m.average_time) p.at("minTime").fail("minTime is above averageTime");
    if (m.max_time && *m.max_time < m.average_time) p.at("maxTime").fail("maxTime is below averageTime");
  }
  if (t->parallel_for)
    if (auto it = v.find("nRanges"); it != v.end())
      m.n_ranges = static_cast<unsigned>(std::min<std::uint64_t>(count(*it, p.at("nRanges"), 1), 1u << 20));
  if (auto it = v.find("productLabel"); it != v.end()) m.product_label = string(*it, p.at("productLabel"));
  if (t->fixed_value) {
    const json& val = require(v, "value", p);
    if (!val.is_number_integer()) p.at("value").fail(std::string("expected an integer, found ") + kind(val));
    m.value = val.get<std::int64_t>();
  }
  if (auto it = v.find("pass"); it != v.end()) {
    const place pp = p.at("pass");
    const json& list = array(*it, pp);
    if (list.empty()) pp.fail("empty list: at least one decision is needed");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_boolean()) pp.at(i).fail(std::string("expected true or false, found ") + kind(list[i]));
      m.pass.push_back(list[i].get<bool>());
    }
  }
  if (auto it = v.find("selectEvents"); it != v.end()) {
    const place ps = p.at("selectEvents");
    const json& list = array(*it, ps);
    for (std::size_t i = 0; i < list.size(); ++i) m.select_paths.push_back(string(list[i], ps.at(i)));
  }
  return m;
}

std::vector<path_config> parse_paths(const json& v, const place& p) {
  std::vector<path_config> paths;
  for (const auto& [name, labels] : object(v, p).items()) {
    const place pp = p.at(name);
    path_config path{name, {}};
    for (std::size_t i = 0; i < array(labels, pp).size(); ++i) path.labels.push_back(string(labels[i], pp.at(i)));
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace

const char* to_string(wait_mode w) noexcept {
  switch (w) {
    case wait_mode::as_configured: return "configured";
    case wait_mode::busy: return "busy";
    case wait_mode::sleep: return "sleep";
    case wait_mode::timer: return "timer";
  }
  return "?";
}

std::optional<wait_mode> parse_wait_mode(std::string_view s) noexcept {
  if (s == "configured") return wait_mode::as_configured;
  if (s == "busy") return wait_mode::busy;
  if (s == "sleep") return wait_mode::sleep;
  if (s == "timer") return wait_mode::timer;
  return std::nullopt;
}

namespace {

// A command-line value: a JSON value where it reads as one (50, 1.5e3, true, [1,2]), else the
// text itself as a string (out.h5).
json override_value(const std::string& text) {
  json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded() || v.is_object()) return json(text);
  return v;
}

// Sets "label.param[.nested...]" of the module (or condition producer) labelled `label`.
void apply_override(json& proc, const parameter_override& o, const std::string& file) {
  auto bad = [&](const std::string& why) { throw config_error(o.origin + " " + o.target + ": " + why); };
  const std::size_t dot = o.target.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == o.target.size())
    bad("expected LABEL.PARAMETER (a module's label and one of its parameters)");
  const std::string label = o.target.substr(0, dot);
  for (const char* key : {"producers", "filters", "analyzers", "outputs", "esProducers"}) {
    auto list = proc.find(key);
    if (list == proc.end() || !list->is_array()) continue;
    for (json& m : *list) {
      if (!m.is_object() || m.value("@label", json()) != json(label)) continue;
      json* at = &m;
      std::size_t from = dot + 1;
      for (;;) {
        const std::size_t next = o.target.find('.', from);
        const std::string name = o.target.substr(from, next == std::string::npos ? std::string::npos : next - from);
        if (name.empty() || name.front() == '@') bad("not a parameter name: '" + name + "'");
        if (next == std::string::npos) {
          (*at)[name] = override_value(o.value);
          return;
        }
        json& inner = (*at)[name];
        if (!inner.is_object()) {
          if (!inner.is_null()) bad("'" + name + "' is not a set of parameters in " + file);
          inner = json::object();
        }
        at = &inner;
        from = next + 1;
      }
    }
  }
  bad("no module labelled '" + label + "' in " + file);
}

}  // namespace

namespace {

// process.commandLine, checked.
std::vector<command_line_parameter> command_line_of(const json& proc, const std::string& file) {
  std::vector<command_line_parameter> out;
  auto it = proc.find("commandLine");
  if (it == proc.end()) return out;
  const place pc{file, "process.commandLine", "", ""};
  object(*it, pc);
  for (const auto& [name, v] : it->items()) {
    const place pn = pc.at(name);
    object(v, pn);
    check_keys(v, pn, {"parameter", "help"});
    if (name.empty() || name.front() == '-' ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != std::string::npos)
      pn.fail("an option name is letters, digits, '-' and '_', not starting with '-'");
    command_line_parameter p{name, string(require(v, "parameter", pn), pn.at("parameter")), ""};
    if (p.target.find('.') == std::string::npos) pn.at("parameter").fail("expected LABEL.PARAMETER, not '" + p.target + "'");
    if (auto h = v.find("help"); h != v.end()) p.help = string(*h, pn.at("help"));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::vector<command_line_parameter> parse_command_line_parameters(std::string_view text, const std::string& file) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("process") || !doc["process"].is_object()) return {};  // parse_config says why
  return command_line_of(doc["process"], file);
}

process_config parse_config(std::string_view text, const std::string& file, const std::vector<parameter_override>& overrides) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    auto [line, col] = detail::line_column(text, e.byte);
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line L, column C: why".
    std::string why = e.what();
    if (auto pos = why.find(": "); pos != std::string::npos) why = why.substr(pos + 2);
    throw config_error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": malformed JSON: " + why);
  }

  process_config c;
  c.file = file;
  const place root{file, "(top level)", "", ""};
  object(doc, root);
  check_keys(doc, root, {"process"});
  const place pp{file, "process", "", ""};
  const json& proc = object(require(doc, "process", root), pp);
  check_keys(proc, pp, {"label", "options", "source", "filters", "producers", "analyzers", "outputs", "paths", "endPaths",
                        "esProducers", "esSources", "commandLine"});
  (void)command_line_of(proc, file);  // checked here too: every reader of the file reports a bad one
  if (!overrides.empty()) {
    json& editable = doc["process"];
    for (const parameter_override& o : overrides) apply_override(editable, o, file);
  }
  if (auto it = proc.find("label"); it != proc.end()) c.label = string(*it, pp.at("label"));

  const place po = pp.at("options");
  const json& options = object(require(proc, "options", pp), po);
  check_keys(options, po, {"nSimultaneousEvents", "busyWaitScaleFactor", "nThreads", "timeScale", "wait", "singleThreaded",
                           "quiet", "json", "timeline", "idleSpinUs", "numberOfConcurrentLuminosityBlocks"});
  c.events_in_flight = static_cast<unsigned>(
      count(require(options, "nSimultaneousEvents", po), po.at("nSimultaneousEvents"), 1, max_events_in_flight));
  if (auto it = options.find("busyWaitScaleFactor"); it != options.end())
    c.busy_wait_scale = positive(*it, po.at("busyWaitScaleFactor"));
  if (auto it = options.find("nThreads"); it != options.end())
    c.threads = static_cast<unsigned>(count(*it, po.at("nThreads"), 1, max_threads));
  if (auto it = options.find("timeScale"); it != options.end())
    c.time_scale = positive(*it, po.at("timeScale"));
  if (auto it = options.find("wait"); it != options.end()) {
    const std::string w = string(*it, po.at("wait"));
    auto mode = parse_wait_mode(w);
    if (!mode) po.at("wait").fail("unknown wait mode '" + w + "' (known: busy, sleep, timer, configured)");
    c.wait = *mode;
  }
  auto flag = [&](const char* key, bool& out) {
    auto it = options.find(key);
    if (it == options.end()) return;
    if (!it->is_boolean()) po.at(key).fail(std::string("expected true or false, found ") + kind(*it));
    out = it->get<bool>();
  };
  flag("singleThreaded", c.single_threaded);
  flag("quiet", c.quiet);
  if (auto it = options.find("json"); it != options.end()) c.json_file = string(*it, po.at("json"));
  if (auto it = options.find("timeline"); it != options.end()) c.timeline_file = string(*it, po.at("timeline"));
  if (auto it = options.find("idleSpinUs"); it != options.end())
    c.idle_spin_us = static_cast<unsigned>(count(*it, po.at("idleSpinUs"), 0, max_idle_spin_us));
  if (auto it = options.find("numberOfConcurrentLuminosityBlocks"); it != options.end())
    c.concurrent_lumis = static_cast<unsigned>(
        count(*it, po.at("numberOfConcurrentLuminosityBlocks"), 1, max_concurrent_lumis));

  const place ps = pp.at("source");
  const json& source = object(require(proc, "source", pp), ps);
  check_keys(source, ps, {"@type", "iterations", "eventsPerRun", "eventsPerLumi", "lumisPerRun"});
  if (auto it = source.find("@type"); it != source.end()) {
    std::string type = string(*it, ps.at("@type"));
    if (type.rfind("demo::", 0) == 0) type.erase(0, 6);
    if (type != "SimpleSource") ps.at("@type").fail("unknown source type '" + type + "' (known: SimpleSource)");
  }
  c.events = count(require(source, "iterations", ps), ps.at("iterations"), 1);
  if (auto it = source.find("eventsPerRun"); it != source.end()) c.events_per_run = count(*it, ps.at("eventsPerRun"), 1);
  if (auto it = source.find("eventsPerLumi"); it != source.end()) c.events_per_lumi = count(*it, ps.at("eventsPerLumi"), 1);
  // lumisPerRun sizes runs in lumis: eventsPerRun = eventsPerLumi x lumisPerRun.
  if (auto it = source.find("lumisPerRun"); it != source.end()) {
    const place pl = ps.at("lumisPerRun");
    const std::uint64_t lumis = count(*it, pl, 1);
    if (source.contains("eventsPerRun")) pl.fail("give eventsPerRun or lumisPerRun, not both");
    if (c.events_per_lumi == 0) pl.fail("needs eventsPerLumi (runs are lumisPerRun lumis of eventsPerLumi events)");
    if (lumis > UINT64_MAX / c.events_per_lumi) pl.fail("eventsPerLumi x lumisPerRun is too large");
    c.events_per_run = c.events_per_lumi * lumis;
  }

  auto modules = [&](const char* key, module_role role) {
    auto it = proc.find(key);
    if (it == proc.end()) return;
    const place pm = pp.at(key);
    const json& list = array(*it, pm);
    for (std::size_t i = 0; i < list.size(); ++i) c.modules.push_back(parse_module(list[i], pm.at(i), role));
  };
  modules("producers", module_role::producer);
  modules("filters", module_role::filter);
  modules("analyzers", module_role::analyzer);
  modules("outputs", module_role::output);

  if (auto it = proc.find("esProducers"); it != proc.end()) {
    const place pe = pp.at("esProducers");
    const json& list = array(*it, pe);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const place pi = pe.at(i);
      object(list[i], pi);
      module_config m;
      m.where = pi.where;
      m.label = string(require(list[i], "@label", pi), pi.at("@label"));
      if (m.label.empty()) pi.fail("empty '@label'");
      const place pl{file, pi.where, m.label, ""};
      c.es_producers.push_back(parse_registered(list[i], pl, std::move(m), string(require(list[i], "@type", pl), pl.at("@type")),
                                                module_role::producer));
    }
  }
  if (auto it = proc.find("esSources"); it != proc.end()) {
    const place pe = pp.at("esSources");
    const json& list = array(*it, pe);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const place pi = pe.at(i);
      object(list[i], pi);
      check_keys(list[i], pi, {"@type", "@label", "file"});
      const std::string type = string(require(list[i], "@type", pi), pi.at("@type"));
      if (type != "JsonConditionsSource") pi.at("@type").fail("unknown conditions source type '" + type + "' (known: JsonConditionsSource)");
      if (!c.conditions_file.empty()) pi.fail("a second conditions source: one JsonConditionsSource holds every record");
      const std::string f = string(require(list[i], "file", pi), pi.at("file"));
      const std::filesystem::path base = std::filesystem::path(file).parent_path();
      c.conditions_file = std::filesystem::path(f).is_absolute() || base.empty() ? f : (base / f).string();
    }
  }
  c.paths = parse_paths(require(proc, "paths", pp), pp.at("paths"));
  if (auto it = proc.find("endPaths"); it != proc.end()) c.end_paths = parse_paths(*it, pp.at("endPaths"));
  return c;
}

std::string read_config_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw config_error(path + ": cannot read: " + std::strerror(errno));
  return text.str();
}

process_config load_config(const std::string& path, const std::vector<parameter_override>& overrides) {
  return parse_config(read_config_text(path), path, overrides);
}

}  // namespace heddle::fw
