// SPDX-License-Identifier: Apache-2.0
// Assembling a process from its configuration (make_process, process.hpp): registered module
// types and condition producers, from the program or plugin libraries (the study's timing modules
// among them, where the program links their built-in plugin, src/fw/study/), each checked (its
// role, every parameter read); the conditions; the paths. process.cpp holds the process itself,
// finalize.cpp checks the whole.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "heddle/core/detail/exception_text.hpp"
#include "heddle/fw/parameter_set.hpp"
#include "heddle/fw/plugins.hpp"
#include "heddle/fw/process.hpp"
#include "heddle/fw/registry.hpp"

namespace heddle::fw {

namespace {

// The program's registered module types, one name each (a type registered under several names,
// as the study's "X" and "demo::X", shows the first in sorted order).
std::string registered_types_line() {
  std::string s;
  std::vector<module_maker> seen;
  for (const std::string& name : registered_module_names()) {
    std::optional<registered_module> m;
    try {
      m = find_registered_module(name);
    } catch (const config_error&) {
      continue;  // a name two libraries register: its own lookup reports that, not this list
    }
    if (!m || !m->make || std::find(seen.begin(), seen.end(), m->make) != seen.end()) continue;
    seen.push_back(m->make);
    s += (s.empty() ? "" : ", ") + name;
  }
  return s.empty() ? "none" : s;
}

// Every key of a registered type's entry is a parameter it reads: another is an error.
void check_all_read(const parameter_set& parameters, const std::string& named, const std::string& type) {
  const std::vector<std::string> unread = parameters.unread();
  if (unread.empty()) return;
  std::string list;
  for (const std::string& u : unread) list += (list.empty() ? "'" : ", '") + u + "'";
  throw config_error(named + ": unknown parameter" + (unread.size() > 1 ? "s " : " ") + list + " (type " + type +
                     " does not read " + (unread.size() > 1 ? "them)" : "it)"));
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
// the role its configuration list says, every parameter read. The factory keeps copies of what
// the context refers to: a stream module's further instances are made when the process runs.
void add_registered(process& p, const module_config& c, const parameter_set& options, plugin_loader* plugins) {
  const std::string named = p.source() + ": " + c.where + " '" + c.label + "'";
  const std::optional<registered_module> found = lookup(named, c, plugins);
  if (!found)
    throw config_error(named + ": unknown module type '" + c.type + "' (registered: " + registered_types_line() + "; " +
                       searched_line(plugins) + ")");
  if (!found->make)
    throw config_error(named + ": type " + c.type + " is a condition producer: it belongs among the esProducers");
  const parameter_set& parameters = c.parameters;
  module_base* m = nullptr;
  try {
    m = &p.add_module({c.label, c.type, c.where, c.select_paths},
                      [make = found->make, parameters, role = c.role, options, named, file = p.source(),
                       where = c.where, label = c.label] {
                        return make(parameters, module_context{role, options, named, file, where, label});
                      });
  } catch (const config_error&) {
    throw;  // a parameter_error names the module and the parameter already
  } catch (...) {
    throw config_error(named + ": type " + c.type +
                       ": constructor failed: " + core_detail::exception_text(std::current_exception()));
  }
  if (m->role() != c.role)
    throw config_error(named + ": type " + c.type + " is " +
                       (m->role() == module_role::analyzer || m->role() == module_role::output ? "an " : "a ") +
                       to_string(m->role()) + ", listed among the " + to_string(c.role) + "s");
  check_all_read(parameters, named, c.type);
}

// A registered condition producer type's producer.
void add_registered_es(process& p, const module_config& c, plugin_loader* plugins) {
  const std::string named = p.source() + ": " + c.where + " '" + c.label + "'";
  const std::optional<registered_module> found = lookup(named, c, plugins);
  if (!found)
    throw config_error(named + ": unknown condition producer type '" + c.type + "' (" + searched_line(plugins) + ")");
  if (!found->make_es) throw config_error(named + ": type " + c.type + " is a module, not a condition producer");
  const parameter_set& parameters = c.parameters;
  try {
    p.add_es_producer({c.label, c.type, c.where, {}}, found->make_es(parameters));
  } catch (const config_error&) {
    throw;
  } catch (...) {
    throw config_error(named + ": type " + c.type +
                       ": constructor failed: " + core_detail::exception_text(std::current_exception()));
  }
  check_all_read(parameters, named, c.type);
}

}  // namespace

process make_process(const process_config& config, plugin_loader* plugins) {
  process p(config.file.empty() ? "process" : config.file);
  for (const module_config& c : config.modules) add_registered(p, c, config.options, plugins);
  for (const module_config& c : config.es_producers) add_registered_es(p, c, plugins);
  if (!config.conditions_file.empty()) p.set_conditions(conditions::from_json_file(config.conditions_file));
  for (const path_config& path : config.paths) p.add_path(path.name, path.labels);
  for (const path_config& path : config.end_paths) p.add_end_path(path.name, path.labels);
  return p;
}

}  // namespace heddle::fw
