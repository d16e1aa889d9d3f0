// SPDX-License-Identifier: Apache-2.0
// The plugin loader: caches per directory, libraries opened on demand (dlopen), closed at the end.
#include "heddle/fw/plugins.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "heddle/fw/errors.hpp"
#include "registry_detail.hpp"

namespace heddle::fw {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_path(const char* text) {
  std::vector<std::string> dirs;
  std::stringstream in(text ? text : "");
  for (std::string d; std::getline(in, d, ':');)
    if (!d.empty()) dirs.push_back(d);
  return dirs;
}

std::string absolute_path(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return (ec ? p : c).string();
}

bool is_library(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_regular_file(ec) && e.path().extension() == ".so";
}

// The cache is fresh when it is no older than the directory (files added or removed) and than
// every library in it.
bool fresh(const fs::path& dir, const fs::path& cache) {
  std::error_code ec;
  const auto written = fs::last_write_time(cache, ec);
  if (ec || fs::last_write_time(dir, ec) > written || ec) return false;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_library(e) && fs::last_write_time(e.path(), ec) > written) return false;
  return !ec;
}

bool readable_directory(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  return !ec;
}

// Writes the cache beside the libraries, atomically (a job reading it meanwhile sees the old one or
// the new one, never half of one), and dated no earlier than the directory, which the rename made
// newer: else the cache would look stale at once. A directory that is not writable keeps none.
void write_cache(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& entries) {
  const fs::path cache = fs::path(dir) / plugin_loader::cache_name;
  const fs::path temporary = cache.string() + "." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    for (const auto& [type, library] : entries) out << type << '\t' << library << '\n';
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(temporary, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(temporary, cache, ec);
  if (ec) {
    fs::remove(temporary, ec);
    return;
  }
  // Dated as new as the newest of the directory and its libraries, should one of them carry a
  // date later than now (copied with its date, or touched).
  auto newest = fs::last_write_time(cache, ec);
  if (ec) return;
  newest = std::max(newest, fs::last_write_time(dir, ec));
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_library(e)) newest = std::max(newest, fs::last_write_time(e.path(), ec));
  fs::last_write_time(cache, newest, ec);
}

}  // namespace

plugin_loader::plugin_loader(std::vector<std::string> path, bool use_environment) : path_(std::move(path)) {
  if (use_environment)
    for (std::string& d : split_path(std::getenv(path_variable))) path_.push_back(std::move(d));
}

void plugin_loader::add_directory(std::string dir) {
  std::error_code ec;
  for (const std::string& d : path_)
    if (d == dir || std::filesystem::equivalent(d, dir, ec)) return;
  path_.push_back(std::move(dir));
}

plugin_loader::~plugin_loader() {
  for (auto it = handles_.rbegin(); it != handles_.rend(); ++it) dlclose(*it);
}

void plugin_loader::open(const std::string& library) {
  if (std::find(opened_.begin(), opened_.end(), library) != opened_.end()) return;
  void* h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw config_error("plugin " + library + ": cannot load: " + dlerror());
  const fw_detail::library_registrations r = fw_detail::registrations_of(library);
  if (!r.errors.empty() || !r.duplicates.empty()) {
    dlclose(h);  // its registrations end with it
    throw config_error(r.errors.empty() ? r.duplicates.front() : r.errors.front());
  }
  handles_.push_back(h);
  opened_.push_back(library);
}

std::vector<std::pair<std::string, std::string>> plugin_loader::refresh(const std::string& dir) {
  std::vector<fs::path> libraries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_library(e)) libraries.push_back(e.path());
  if (ec) throw config_error("plugin directory " + dir + ": cannot read: " + ec.message());
  std::sort(libraries.begin(), libraries.end());
  std::vector<std::pair<std::string, std::string>> entries;
  for (const fs::path& p : libraries) {
    const std::string library = absolute_path(p);
    void* h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw config_error("plugin " + library + ": cannot load: " + dlerror());
    fw_detail::library_registrations r = fw_detail::registrations_of(library);
    dlclose(h);
    // A name another library registered too is listed all the same: find() reports the clash when
    // that type is asked for, naming both, rather than this directory failing for every type.
    if (!r.errors.empty()) throw config_error("plugin directory " + dir + ": " + r.errors.front());
    for (std::string& n : r.names) entries.emplace_back(std::move(n), library);
  }
  write_cache(dir, entries);
  return entries;
}

const std::vector<std::pair<std::string, std::string>>& plugin_loader::cache_of(const std::string& dir) {
  for (const auto& [d, entries] : caches_)
    if (d == dir) return entries;
  std::vector<std::pair<std::string, std::string>> entries;
  const fs::path cache = fs::path(dir) / cache_name;
  if (!readable_directory(dir)) {
    // A directory that does not exist or cannot be listed lists nothing (a path may name optional
    // places, or another user's).
  } else if (fresh(dir, cache)) {
    std::ifstream in(cache);
    for (std::string line; std::getline(in, line);) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos) entries.emplace_back(line.substr(0, tab), line.substr(tab + 1));
    }
  } else {
    entries = refresh(dir);
  }
  caches_.emplace_back(dir, std::move(entries));
  return caches_.back().second;
}

std::string plugin_loader::searched() const {
  std::string s = "the program";
  for (const std::string& dir : path_) s += ", " + dir;
  return s;
}

registered_module plugin_loader::find(const std::string& type) {
  if (std::optional<registered_module> m = lookup(type)) return *m;
  throw config_error("unknown module type '" + type + "' (searched " + searched() + "; --plugin-path and " +
                     path_variable + " add directories)");
}

std::optional<registered_module> plugin_loader::lookup(const std::string& type) {
  const std::optional<registered_module> known = find_registered_module(type);
  // The program's own types, and those of plugins it opened otherwise, are not looked for on the
  // path; those of this loader's plugins are, for a clash with another plugin (their caches are
  // already read: this costs no file access).
  if (known && std::find(opened_.begin(), opened_.end(), known->library) == opened_.end()) return *known;
  // Every directory is read, not only up to the first that has the type: two plugins that register
  // one name are an error wherever they lie on the path, not a choice by order.
  std::vector<std::string> libraries;
  for (const std::string& dir : path_)
    for (const auto& [t, library] : cache_of(dir))
      if (t == type && std::find(libraries.begin(), libraries.end(), library) == libraries.end())
        libraries.push_back(library);
  if (libraries.size() > 1) {
    std::string all = libraries[0];
    for (std::size_t i = 1; i < libraries.size(); ++i)
      all += (i + 1 == libraries.size() ? " and " : ", ") + libraries[i];
    throw config_error("module type '" + type + "' is registered by " + std::to_string(libraries.size()) +
                       " plugins: " + all);
  }
  if (known) return known;
  if (libraries.empty()) return std::nullopt;
  open(libraries.front());
  if (auto m = find_registered_module(type)) return m;
  throw config_error("plugin " + libraries.front() + " no longer registers module type '" + type +
                     "' (its directory's cache is stale: delete " + cache_name + " there)");
}

}  // namespace heddle::fw
