// SPDX-License-Identifier: Apache-2.0
// The module registry: names to makers, filled by HEDDLE_FW_MODULE's static registrations as the
// program starts and as plugin libraries load, emptied of a library's names as it unloads.
#include "heddle/fw/registry.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

#include "heddle/fw/errors.hpp"
#include "registry_detail.hpp"

namespace heddle::fw_detail {

namespace {

struct problem {
  std::string name;
  const void* key;  // the registration that met the problem
  std::string text;
  bool duplicate;  // the name was registered first by another library (else: an empty name)
};

const void* key_of(const registered_module& m) noexcept {
  return m.make ? reinterpret_cast<const void*>(m.make) : reinterpret_cast<const void*>(m.make_es);
}

struct registry {
  std::mutex m;
  std::map<std::string, registered_module> by_name;
  std::vector<problem> problems;
};

// Never destroyed: libraries' registrations end while the program exits, in an order no static
// destructor could be placed before.
registry& the_registry() {
  static registry* r = new registry;
  return *r;
}

}  // namespace

std::string library_of(const void* address) {
  Dl_info info{};
  link_map* map = nullptr;
  if (!dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP)) return "(unknown library)";
  // The program itself has no name in its link map, and dladdr gives its argv[0] instead (relative
  // to the directory it was started in): its real path is what names it.
  if (map && (!map->l_name || !*map->l_name)) {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) return exe.string();
  }
  if (info.dli_fname && *info.dli_fname) return info.dli_fname;
  return "(unknown library)";
}

module_registration::module_registration(const char* name, module_maker make) noexcept
    : key_(reinterpret_cast<const void*>(make)) {
  registered_module m;
  m.make = make;
  add(name, std::move(m));
}

module_registration::module_registration(const char* name, es_maker make) noexcept
    : key_(reinterpret_cast<const void*>(make)) {
  registered_module m;
  m.make_es = make;
  add(name, std::move(m));
}

void module_registration::add(const char* name, registered_module entry) noexcept {
  try {
    registry& r = the_registry();
    entry.name = name ? name : "";
    entry.library = library_of(key_);
    std::lock_guard lock(r.m);
    if (entry.name.empty()) {
      r.problems.push_back({entry.name, key_, entry.library + " registers a module type with an empty name", false});
      return;
    }
    auto [it, fresh] = r.by_name.emplace(entry.name, entry);
    if (!fresh && key_of(it->second) != key_)
      r.problems.push_back({entry.name, key_,
                            "module type '" + entry.name + "' is registered twice: by " + it->second.library +
                                " and by " + entry.library,
                            true});
  } catch (...) {
    // Out of memory while a library loads: the type stays unknown, and asking for it says so.
  }
}

module_registration::~module_registration() {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  for (auto it = r.by_name.begin(); it != r.by_name.end(); ++it)
    if (key_of(it->second) == key_) {
      r.by_name.erase(it);
      break;
    }
  std::erase_if(r.problems, [&](const problem& p) { return p.key == key_; });
}

library_registrations registrations_of(const std::string& library) {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  library_registrations out;
  for (const auto& [name, m] : r.by_name)
    if (m.library == library) out.names.push_back(name);
  for (const problem& p : r.problems) {
    if (library_of(p.key) != library) continue;
    (p.duplicate ? out.duplicates : out.errors).push_back(p.text);
    if (p.duplicate) out.names.push_back(p.name);
  }
  std::sort(out.names.begin(), out.names.end());
  return out;
}

}  // namespace heddle::fw_detail

namespace heddle::fw {

std::optional<registered_module> find_registered_module(const std::string& name) {
  fw_detail::registry& r = fw_detail::the_registry();
  std::lock_guard lock(r.m);
  for (const fw_detail::problem& p : r.problems)
    if (p.name == name) throw config_error(p.text);
  auto it = r.by_name.find(name);
  if (it == r.by_name.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> registered_module_names() {
  fw_detail::registry& r = fw_detail::the_registry();
  std::lock_guard lock(r.m);
  std::vector<std::string> names;
  for (const auto& [name, m] : r.by_name) names.push_back(name);
  return names;
}

}  // namespace heddle::fw
