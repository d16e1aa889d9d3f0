// SPDX-License-Identifier: Apache-2.0
// Module types by name: how a configuration's "@type" finds C++ code. A module type (or a condition
// producer, es_producer.hpp) registers itself where it is defined, with HEDDLE_FW_MODULE(ClassName)
// at namespace scope in a .cpp file:
// in the program, in a library it links, or in a plugin library that heddle-fw opens on demand
// (plugins.hpp). The class must be constructible from a const parameter_set& (its parameters from
// the configuration).
//
//   class JetProducer : public heddle::fw::global::EDProducer<> { ... };
//   HEDDLE_FW_MODULE(JetProducer);
//
// The name is the class name as written in the macro (with its namespaces if written with them:
// HEDDLE_FW_MODULE(reco::JetProducer) registers "reco::JetProducer").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/abilities.hpp"
#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/module_base.hpp"

namespace heddle::fw {

class parameter_set;

// Makes a module, or a condition producer, from its parameters.
using module_maker = std::unique_ptr<module_base> (*)(const parameter_set& parameters);
using es_maker = std::unique_ptr<es_producer> (*)(const parameter_set& parameters);

struct registered_module {
  std::string name;
  module_maker make = nullptr;  // a module type, or
  es_maker make_es = nullptr;   // a condition producer type
  std::string library;          // the file that registered it (the program's own path for linked-in code)
};

// The registered type `name`, if any; config_error if two libraries registered that name (naming
// both). Cost: a lock and a map lookup. Thread-safe, beside libraries loading and unloading too.
HEDDLE_EXPORT std::optional<registered_module> find_registered_module(const std::string& name);
// Every registered name, sorted. Thread-safe.
HEDDLE_EXPORT std::vector<std::string> registered_module_names();

namespace detail {
template <class M>
std::unique_ptr<module_base> make_module(const parameter_set& parameters) {
  return std::make_unique<M>(parameters);
}
template <class P>
std::unique_ptr<es_producer> make_es_producer(const parameter_set& parameters) {
  return std::make_unique<P>(parameters);
}
template <class T>
constexpr auto maker_of() noexcept {
  static_assert(
      std::is_base_of_v<module_base, T> || std::is_base_of_v<es_producer, T>,
      "HEDDLE_FW_MODULE registers modules (global.hpp, stream.hpp, one.hpp) and condition producers (es_producer.hpp)");
  if constexpr (std::is_base_of_v<es_producer, T>) {
    return &make_es_producer<T>;
  } else {
    check_module_type<T>();
    return &make_module<T>;
  }
}

// Registers `name` for as long as it lives (a library's registrations end when it is unloaded).
// Never throws (it runs while a library loads, where an exception cannot be caught): a problem
// (an empty name, a name registered twice) is kept and reported by find_registered_module and by
// the plugin loader, naming both libraries. Made and destroyed as a static object (HEDDLE_FW_MODULE),
// during static initialisation and destruction of the program or of a library being loaded or
// unloaded, on that thread; thread-safe (the registry is locked).
class HEDDLE_EXPORT module_registration {
 public:
  module_registration(const char* name, module_maker make) noexcept;
  module_registration(const char* name, es_maker make) noexcept;
  ~module_registration();
  module_registration(const module_registration&) = delete;
  module_registration& operator=(const module_registration&) = delete;

 private:
  void add(const char* name, registered_module entry) noexcept;
  const void* key_;  // the maker's address: which registration this is
};
}  // namespace detail

}  // namespace heddle::fw

#define HEDDLE_FW_CONCAT2(a, b) a##b
#define HEDDLE_FW_CONCAT(a, b) HEDDLE_FW_CONCAT2(a, b)
// Registers module class `type` under its name as written. At namespace scope in a .cpp file: it
// defines a static object, which registers during static initialisation.
#define HEDDLE_FW_MODULE(type)                                                                             \
  static const ::heddle::fw::detail::module_registration HEDDLE_FW_CONCAT(heddle_fw_module_, __COUNTER__)( \
      #type, ::heddle::fw::detail::maker_of<type>())
