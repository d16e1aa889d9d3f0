// SPDX-License-Identifier: Apache-2.0
// Plugins: module types in shared libraries that heddle-fw opens only when a configuration names
// them. Each directory of the plugin path has a cache file (cache_name) listing which library
// registers which type (HEDDLE_FW_MODULE, registry.hpp); a type is looked up there and its library
// opened at its first use, so a job opens the libraries it needs and no others. A missing or stale
// cache (older than the directory or a library in it) is rebuilt by opening each library once.
//
// The loader unloads what it opened when it is destroyed: it must outlive every module made from
// its libraries (destroy processes first). Plugins are built with -fno-gnu-unique (the CMake
// function heddle_fw_add_plugin does it), or the C++ runtime keeps them loaded to the end.
//
// Thread safety: a loader is used by one thread at a time (it is meant for reading a
// configuration, before events run): none of its calls is thread-safe against another on the same
// loader. The registry it fills is shared by every loader and locked. Loaders on different threads
// must not rebuild the same directory's cache at once (refresh).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/registry.hpp"

namespace heddle::fw {

class HEDDLE_EXPORT plugin_loader {
 public:
  static constexpr const char* cache_name = ".heddle-fw-plugins";
  static constexpr const char* path_variable = "HEDDLE_FW_PLUGIN_PATH";

  // Searches `path` (directories, in order), then the directories of HEDDLE_FW_PLUGIN_PATH
  // (colon-separated) when `use_environment`. Opens nothing yet. Thread-safe (while nobody
  // changes the environment).
  explicit plugin_loader(std::vector<std::string> path = {}, bool use_environment = true);
  // Closes the libraries it opened: after every module made from them is destroyed (above). The
  // owner's call.
  ~plugin_loader();
  plugin_loader(const plugin_loader&) = delete;
  plugin_loader& operator=(const plugin_loader&) = delete;

  // The module type `type`: already registered (the program, its libraries, plugins opened so
  // far), else from the one library of the path whose directory's cache lists it, which is then
  // opened. Every directory's cache is read (once per loader), so that two plugins registering one
  // name are found wherever they lie; a type of a library this loader opened is checked against
  // them too, so that the answer does not depend on which of the library's types was asked for
  // first. A directory that does not exist or cannot be listed is skipped. config_error naming
  // the type and every directory searched when none has it; naming every library when several
  // register it; naming the library when it fails to open, registers an empty name, or registers
  // a name another library registered first. Cost: a map lookup for the program's types;
  // otherwise reading each directory's cache once (rebuilding stale ones: refresh), a scan of the
  // caches, and opening a library once. The loader's one thread (above); blocks on the file
  // system and the dynamic loader.
  registered_module find(const std::string& type);
  // As find(), but nullopt where no library of the path (nor the program) registers `type`, for a
  // caller that words that message itself (heddle-fw adds its built-in types); the other errors are
  // thrown as find() throws them. The loader's one thread, as find().
  std::optional<registered_module> lookup(const std::string& type);
  // What find() searches, for messages: "the program, DIR, DIR...". The loader's one thread.
  std::string searched() const;

  // Appends `dir` to the path (searched last), unless the path names it already. heddle-fw adds
  // the directory of the plugins installed with it this way. Before the first find() only. The
  // loader's one thread.
  void add_directory(std::string dir);

  // The directories searched, in order. The loader's one thread.
  const std::vector<std::string>& path() const noexcept { return path_; }
  // The libraries this loader opened, in order. The loader's one thread.
  const std::vector<std::string>& opened() const noexcept { return opened_; }

  // Rebuilds `dir`'s cache: opens each *.so in it once, records the types it registers (those
  // another library registers too included: find() reports the clash), closes it and writes the
  // cache, atomically (kept in memory only where the directory is not writable). Returns the
  // (type, library path) entries. config_error when the directory cannot be read, or naming the
  // library when one fails to open or registers an empty name. Thread-safe for different
  // directories, not for one: two refreshes of one directory at once in one process would write
  // the same temporary file (other processes may refresh it meanwhile). Blocks on the file system
  // and the dynamic loader.
  static std::vector<std::pair<std::string, std::string>> refresh(const std::string& dir);

 private:
  // `dir`'s cache entries, rebuilt first if stale.
  const std::vector<std::pair<std::string, std::string>>& cache_of(const std::string& dir);
  void open(const std::string& library);

  std::vector<std::string> path_;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> caches_;  // per directory read
  std::vector<std::string> opened_;
  std::vector<void*> handles_;
};

}  // namespace heddle::fw
