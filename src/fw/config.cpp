// SPDX-License-Identifier: Apache-2.0
// Reading the configuration JSON (nlohmann-json). Every error is one line naming the file and
// where in it: line and column for syntax, the JSON path and the module's label for the rest.
#include "heddle/fw/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>

#include "heddle/fw/detail/config_keys.hpp"
#include "heddle/fw/detail/parameter_set_json.hpp"
#include "json_position.hpp"

namespace heddle::fw {

namespace {

using json = nlohmann::json;
using fw_detail::array;
using fw_detail::boolean;
using fw_detail::check_keys;
using fw_detail::count;
using fw_detail::key;
using fw_detail::object;
using fw_detail::place;
using fw_detail::read_keys;
using fw_detail::require;
using fw_detail::string;

void check_keys(const json& obj, const place& p, std::initializer_list<std::string_view> known) {
  check_keys(obj, p, std::span(known.begin(), known.size()));
}

std::vector<std::string> strings(const json& v, const place& p) {
  std::vector<std::string> out;
  const json& list = array(v, p);
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(string(list[i], p.at(i)));
  return out;
}

// process.options: heddle-fw's settings (the command line wins over them). The keys that module
// types need (the study's timing modules' busyWaitScaleFactor...) are added beside them
// (config_keys.hpp, added_option) and read by read_options.
const key<process_config> option_keys[] = {
    {"nSimultaneousEvents", true,
     [](const json& v, const place& p, process_config& c) {
       c.events_in_flight = static_cast<unsigned>(count(v, p, 1, max_events_in_flight));
     }},
    {"nThreads", false,
     [](const json& v, const place& p, process_config& c) {
       c.threads = static_cast<unsigned>(count(v, p, 1, max_threads));
     }},
    {"singleThreaded", false,
     [](const json& v, const place& p, process_config& c) { c.single_threaded = boolean(v, p); }},
    {"quiet", false, [](const json& v, const place& p, process_config& c) { c.quiet = boolean(v, p); }},
    {"json", false, [](const json& v, const place& p, process_config& c) { c.json_file = string(v, p); }},
    {"timeline", false, [](const json& v, const place& p, process_config& c) { c.timeline_file = string(v, p); }},
    {"idleSpinUs", false,
     [](const json& v, const place& p, process_config& c) {
       c.idle_spin_us = static_cast<unsigned>(count(v, p, 0, max_idle_spin_us));
     }},
    {"numberOfConcurrentLuminosityBlocks", false,
     [](const json& v, const place& p, process_config& c) {
       c.concurrent_lumis = static_cast<unsigned>(count(v, p, 1, max_concurrent_lumis));
     }},
};

// The added options (config_keys.hpp), under a lock: a plugin may add some as it loads while
// another thread reads a configuration.
struct added_option_table {
  std::mutex m;
  std::vector<fw_detail::added_option> rows;
};
added_option_table& added_table() {
  static added_option_table* t = new added_option_table;  // never destroyed: rows end as libraries unload
  return *t;
}

// process.options: the framework's keys (option_keys) and the added ones, each added key listed and
// read right after the key it names; the added keys present go to c.options.
void read_options(const json& obj, const place& p, process_config& c) {
  struct row {
    std::string_view name;
    const key<process_config>* own = nullptr;  // a framework's key, or
    const fw_detail::added_option* added = nullptr;
  };
  const std::vector<fw_detail::added_option> added = fw_detail::added_options();
  std::vector<row> rows;
  for (const key<process_config>& k : option_keys) rows.push_back({k.name, &k, nullptr});
  for (const fw_detail::added_option& a : added) {
    auto at = std::find_if(rows.begin(), rows.end(), [&](const row& r) { return r.name == a.after; });
    rows.insert(at == rows.end() ? rows.end() : at + 1, row{a.name, nullptr, &a});
  }
  std::vector<std::string_view> names;
  for (const row& r : rows) names.push_back(r.name);
  check_keys(obj, p, names);
  json present = json::object();
  for (const row& r : rows) {
    auto it = obj.find(r.name);
    if (it == obj.end()) {
      if (r.own && r.own->required) p.fail("missing required key '" + std::string(r.name) + "'");
      continue;
    }
    const place at = p.at(std::string(r.name));
    if (r.own) {
      r.own->read(*it, at, c);
    } else {
      r.added->check(*it, at);
      present[std::string(r.name)] = *it;
    }
  }
  c.options = fw_detail::make_parameter_set(std::move(present), p.file + ": " + p.where);
}

// process.source, and lumisPerRun, which sizes runs in lumis (eventsPerRun = eventsPerLumi x
// lumisPerRun) once every key is read.
struct source_reading {
  process_config& c;
  std::uint64_t lumis_per_run = 0;
};
const key<source_reading> source_keys[] = {
    {"@type", false,
     [](const json& v, const place& p, source_reading&) {
       std::string type = string(v, p);
       if (type.rfind("demo::", 0) == 0) type.erase(0, 6);
       if (type != "SimpleSource") p.fail("unknown source type '" + type + "' (known: SimpleSource)");
     }},
    {"iterations", true, [](const json& v, const place& p, source_reading& s) { s.c.events = count(v, p, 1); }},
    {"eventsPerRun", false,
     [](const json& v, const place& p, source_reading& s) { s.c.events_per_run = count(v, p, 1); }},
    {"eventsPerLumi", false,
     [](const json& v, const place& p, source_reading& s) { s.c.events_per_lumi = count(v, p, 1); }},
    {"lumisPerRun", false, [](const json& v, const place& p, source_reading& s) { s.lumis_per_run = count(v, p, 1); }},
};

// A module's or condition producer's entry (registry.hpp): its label, type, and for modules on end
// paths selectEvents; every other key is a parameter, which the module reads and checks as it is
// made, and of which the process reports those it did not read (make_process). The entry is moved
// into the parameters: the document's copy is read no more.
module_config parse_registered(json&& v, const place& p, module_config m, std::string type, module_role role) {
  m.type = std::move(type);
  m.role = role;
  json parameters = std::move(v);
  parameters.erase("@label");
  parameters.erase("@type");
  if (auto it = parameters.find("selectEvents");
      it != parameters.end() && (role == module_role::output || role == module_role::analyzer)) {
    m.select_paths = strings(*it, p.at("selectEvents"));
    parameters.erase(it);
  }
  m.parameters = fw_detail::make_parameter_set(std::move(parameters), p.file + ": " + p.where + " '" + m.label + "'");
  return m;
}

module_config parse_module(json&& v, const place& where, module_role expected) {
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
  return parse_registered(std::move(v), p, std::move(m), std::move(type), expected);
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

// An entry of process.commandLine.
const key<command_line_parameter> command_line_keys[] = {
    {"parameter", true,
     [](const json& v, const place& p, command_line_parameter& c) {
       c.target = string(v, p);
       if (c.target.find('.') == std::string::npos) p.fail("expected LABEL.PARAMETER, not '" + c.target + "'");
     }},
    {"help", false, [](const json& v, const place& p, command_line_parameter& c) { c.help = string(v, p); }},
};

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
    if (name.empty() || name.front() == '-' ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != std::string::npos)
      pn.fail("an option name is letters, digits, '-' and '_', not starting with '-'");
    command_line_parameter p{name, "", ""};
    read_keys(v, pn, std::span<const key<command_line_parameter>>(command_line_keys), p);
    out.push_back(std::move(p));
  }
  return out;
}

// An entry of esSources: a JsonConditionsSource and its file.
const key<std::string> es_source_keys[] = {
    {"@type", true,
     [](const json& v, const place& p, std::string&) {
       const std::string type = string(v, p);
       if (type != "JsonConditionsSource")
         p.fail("unknown conditions source type '" + type + "' (known: JsonConditionsSource)");
     }},
    {"@label"},
    {"file", true, [](const json& v, const place& p, std::string& file) { file = string(v, p); }},
};

}  // namespace

std::vector<command_line_parameter> parse_command_line_parameters(std::string_view text, const std::string& file) {
  const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("process") || !doc["process"].is_object()) return {};  // parse_config says why
  return command_line_of(doc["process"], file);
}

process_config parse_config(std::string_view text, const std::string& file,
                            const std::vector<parameter_override>& overrides) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    auto [line, col] = fw_detail::line_column(text, e.byte);
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
  check_keys(proc, pp,
             {"label", "options", "source", "filters", "producers", "analyzers", "outputs", "paths", "endPaths",
              "esProducers", "esSources", "commandLine"});
  (void)command_line_of(proc, file);  // checked here too: every reader of the file reports a bad one
  if (!overrides.empty()) {
    json& editable = doc["process"];
    for (const parameter_override& o : overrides) apply_override(editable, o, file);
  }
  if (auto it = proc.find("label"); it != proc.end()) c.label = string(*it, pp.at("label"));

  const place po = pp.at("options");
  read_options(object(require(proc, "options", pp), po), po, c);

  const place ps = pp.at("source");
  source_reading source{c};
  read_keys(object(require(proc, "source", pp), ps), ps, std::span<const key<source_reading>>(source_keys), source);
  if (source.lumis_per_run != 0) {
    const place pl = ps.at("lumisPerRun");
    if (proc.at("source").contains("eventsPerRun")) pl.fail("give eventsPerRun or lumisPerRun, not both");
    if (c.events_per_lumi == 0) pl.fail("needs eventsPerLumi (runs are lumisPerRun lumis of eventsPerLumi events)");
    if (source.lumis_per_run > UINT64_MAX / c.events_per_lumi) pl.fail("eventsPerLumi x lumisPerRun is too large");
    c.events_per_run = c.events_per_lumi * source.lumis_per_run;
  }

  // The lists' entries are moved out of the document into their modules' parameters.
  json& entries = doc["process"];
  auto modules = [&](const char* list_key, module_role role) {
    auto it = entries.find(list_key);
    if (it == entries.end()) return;
    const place pm = pp.at(list_key);
    array(*it, pm);
    for (std::size_t i = 0; i < it->size(); ++i) c.modules.push_back(parse_module(std::move((*it)[i]), pm.at(i), role));
  };
  modules("producers", module_role::producer);
  modules("filters", module_role::filter);
  modules("analyzers", module_role::analyzer);
  modules("outputs", module_role::output);

  if (auto it = entries.find("esProducers"); it != entries.end()) {
    const place pe = pp.at("esProducers");
    json& list = *it;
    array(list, pe);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const place pi = pe.at(i);
      object(list[i], pi);
      module_config m;
      m.where = pi.where;
      m.label = string(require(list[i], "@label", pi), pi.at("@label"));
      if (m.label.empty()) pi.fail("empty '@label'");
      const place pl{file, pi.where, m.label, ""};
      std::string type = string(require(list[i], "@type", pl), pl.at("@type"));
      c.es_producers.push_back(parse_registered(std::move(list[i]), pl, std::move(m), std::move(type),
                                                module_role::producer));
    }
  }
  if (auto it = proc.find("esSources"); it != proc.end()) {
    const place pe = pp.at("esSources");
    const json& list = array(*it, pe);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const place pi = pe.at(i);
      std::string f;
      read_keys(object(list[i], pi), pi, std::span<const key<std::string>>(es_source_keys), f);
      if (!c.conditions_file.empty())
        pi.fail("a second conditions source: one JsonConditionsSource holds every record");
      // Relative to the configuration's folder.
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

void set_option(process_config& config, const std::string& name, const std::string& value, const std::string& origin) {
  const std::vector<fw_detail::added_option> added = fw_detail::added_options();
  auto row = std::find_if(added.begin(), added.end(), [&](const fw_detail::added_option& a) { return a.name == name; });
  if (row == added.end()) {
    std::string list;
    for (const fw_detail::added_option& a : added) list += (list.empty() ? "" : ", ") + std::string(a.name);
    throw config_error(origin + ": unknown option '" + name + "' (added options: " + (list.empty() ? "none" : list) +
                       ")");
  }
  const std::string file = config.file.empty() ? "process" : config.file;
  const json v = override_value(value);
  try {
    row->check(v, place{file, "process.options", "", ""}.at(name));
  } catch (const config_error& e) {
    throw config_error(origin + ": " + e.what());
  }
  json options = fw_detail::json_of(config.options);  // a copy, changed and made a set again
  options[name] = v;
  config.options = fw_detail::make_parameter_set(std::move(options), file + ": process.options");
}

process_config load_config(const std::string& path, const std::vector<parameter_override>& overrides) {
  return parse_config(read_config_text(path), path, overrides);
}

}  // namespace heddle::fw

namespace heddle::fw_detail {

option_registration::option_registration(added_option row) noexcept : row_(row) {
  try {
    fw::added_option_table& t = fw::added_table();
    std::lock_guard lock(t.m);
    t.rows.push_back(row);
  } catch (...) {
    // Out of memory while a library loads: the option stays unknown, and a file that gives it says so.
  }
}

option_registration::~option_registration() {
  fw::added_option_table& t = fw::added_table();
  std::lock_guard lock(t.m);
  std::erase_if(t.rows, [&](const added_option& r) { return r.name == row_.name && r.check == row_.check; });
}

std::vector<added_option> added_options() {
  fw::added_option_table& t = fw::added_table();
  std::lock_guard lock(t.m);
  return t.rows;
}

}  // namespace heddle::fw_detail
