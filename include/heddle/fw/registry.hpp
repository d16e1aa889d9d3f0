// SPDX-License-Identifier: Apache-2.0
// Module types by name: how a configuration's "@type" finds C++ code. A module type (or a condition
// producer, es_producer.hpp) registers itself where it is defined, with HEDDLE_FW_MODULE(ClassName)
// at namespace scope in a .cpp file:
// in the program, in a library it links, or in a plugin library that heddle-fw opens on demand
// (plugins.hpp). The class must be constructible from a const parameter_set& (its parameters from
// the configuration), or from that and a const module_context& (its label, where the
// configuration lists it, and the process options that types add: a type whose kind or messages
// depend on them).
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
#include <type_traits>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/abilities.hpp"
#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/module_base.hpp"

namespace heddle::fw {

class parameter_set;

// Where a configuration lists a module, for the types that ask (constructible from a const
// parameter_set& and a const module_context&): its label and place, the list it is in, and the
// process options that types add. Its references last as long as the call that gives it
// (make_process's construction of the module): copy what outlives the constructor.
struct module_context {
  module_role listed;  // the list its entry is in: producers, filters, analyzers or outputs
  // process.options' keys that types add beside the framework's own (process_config::options):
  // the ones the file gives, checked as their registration says.
  const parameter_set& options;
  // "FILE: process.producers[3] 'alpha'": how the framework names the entry in messages; made of
  // the three below.
  const std::string& named;
  const std::string& file;   // the configuration ("reco.json")
  const std::string& where;  // the entry's place in it ("process.producers[3]")
  const std::string& label;  // its @label ("alpha"), CMS's module label
};

// Makes a module, or a condition producer, from its parameters (and, for a module, its context).
using module_maker = std::unique_ptr<module_base> (*)(const parameter_set& parameters, const module_context& context);
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

}  // namespace heddle::fw

namespace heddle::fw_detail {
// The fw layer's internals name these unqualified.
using fw::es_maker;
using fw::module_context;
using fw::module_maker;
using fw::parameter_set;
using fw::registered_module;

template <class M>
std::unique_ptr<module_base> make_module(const parameter_set& parameters,
                                         [[maybe_unused]] const module_context& context) {
  if constexpr (std::is_constructible_v<M, const parameter_set&, const module_context&>) {
    return std::make_unique<M>(parameters, context);
  } else {
    return std::make_unique<M>(parameters);
  }
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
}  // namespace heddle::fw_detail

#define HEDDLE_FW_CONCAT2(a, b) a##b
#define HEDDLE_FW_CONCAT(a, b) HEDDLE_FW_CONCAT2(a, b)
// Registers module class `type` under its name as written. At namespace scope in a .cpp file: it
// defines a static object, which registers during static initialisation.
#define HEDDLE_FW_MODULE(type)                                                                            \
  static const ::heddle::fw_detail::module_registration HEDDLE_FW_CONCAT(heddle_fw_module_, __COUNTER__)( \
      #type, ::heddle::fw_detail::maker_of<type>())
