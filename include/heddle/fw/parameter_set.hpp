// SPDX-License-Identifier: Apache-2.0
// A module's typed parameters: CMS's edm::ParameterSet. The framework makes one from each module's
// keys in the configuration (every key but "@label" and "@type"; docs/fw-config.md, "Module
// parameters") and hands it to the module's constructor, which reads what it needs:
//
//   explicit jet_producer(const parameter_set& ps)
//       : src_(ps.get<input_tag>("src")),
//         pt_min_(ps.get<double>("ptMin", 5.0)),
//         cuts_(ps.get<parameter_set>("cuts")),
//         bins_(ps.get<std::vector<unsigned>>("bins")) {}
//
// A set remembers which parameters were looked at; after the constructor, unread() lists the keys
// the module did not ask for, the unknown parameters, for the framework to report (so that a misspelt
// "ptmin" can be an error rather than a silently ignored cut).
//
// Read parameters in the constructor, once: each get is a lookup in a map, a lock and, for
// strings, vectors and nested sets, an allocation; not something for a module's per-event path.
//
// Thread safety: a set is immutable but for its read tracking, which is locked. get, exists and
// every other const call may run on one set (and on the sets got from it, and on copies) from any
// number of threads at once. Assigning to one set object is not thread-safe against other uses of
// that object, as for a std::shared_ptr.
//
// JSON (nlohmann-json) is a private dependency of heddle::fw: this header shows none of it.
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/errors.hpp"
#include "heddle/fw/input_tag.hpp"

namespace heddle::fw {

class parameter_set;

// A parameter that is absent, of another type, out of range or malformed. One line:
//   "<where>: parameter '<name>': <what> (expected <type>, found <JSON type and value>)"
// e.g. "reco.json: process.producers[3] 'jets': parameter 'bins[3]': wrong type (expected
// unsigned integer, found string \"7\")". A nested set's parameter is named from the module's
// top-level set ("cuts.ptMin"), where() is then that top-level set's.
class HEDDLE_EXPORT parameter_error : public config_error {
 public:
  ~parameter_error() override;
  // `what` is the part after "parameter '<name>': ".
  parameter_error(std::string where, std::string name, const std::string& what);

  const std::string& where() const noexcept { return where_; }  // as parameter_set::where()
  const std::string& name() const noexcept { return name_; }    // "ptMin", "bins[3]", "cuts.ptMin"

 private:
  std::string where_;
  std::string name_;
};

}  // namespace heddle::fw

namespace heddle::fw_detail {
// The fw layer's internals name these unqualified.
using fw::input_tag;
using fw::parameter_set;

template <class T>
inline constexpr bool is_parameter_scalar = std::same_as<T, bool> || std::same_as<T, int> ||
                                            std::same_as<T, unsigned> || std::same_as<T, long> ||
                                            std::same_as<T, unsigned long> || std::same_as<T, long long> ||
                                            std::same_as<T, unsigned long long> || std::same_as<T, double> ||
                                            std::same_as<T, float> || std::same_as<T, std::string> ||
                                            std::same_as<T, input_tag> || std::same_as<T, parameter_set>;
template <class T>
inline constexpr bool is_parameter_type = is_parameter_scalar<T>;
template <class X>
inline constexpr bool is_parameter_type<std::vector<X>> = is_parameter_scalar<X>;

struct parameter_node;    // the set's JSON object and its place; immutable, shared
struct parameter_reads;   // which values of a document were looked at; locked, shared
struct parameter_access;  // how the implementation makes sets
}  // namespace heddle::fw_detail

namespace heddle::fw {

// The types a parameter can be read as, each compiled once in heddle::fw (another T does not
// compile: "constraints not satisfied ... parameter_type<T>"):
//   bool                                        JSON true or false
//   int, long, long long                        an integral JSON number in the type's range (a
//   unsigned, unsigned long, unsigned long long   whole float such as 1e3 counts); so every
//                                               std::[u]int32_t, [u]int64_t and std::size_t
//   double, float                               any JSON number (float: within float's range)
//   std::string                                 a JSON string
//   input_tag                                   a JSON string "label" or "label:instance"
//   parameter_set                               a JSON object
//   std::vector<X>, X any of the above          a JSON array of X
template <class T>
concept parameter_type = fw_detail::is_parameter_type<T>;

class HEDDLE_EXPORT parameter_set {
 public:
  // The empty set: no parameters, where() "parameters". May allocate (once per process).
  // Thread-safe.
  parameter_set();

  // The set of the JSON object `json_object_text`; `where` names it in messages (and is where()).
  // Parses and copies the text once. Throws config_error "<where>:<line>:<column>: malformed JSON:
  // <why>" on bad syntax, "<where>:<line>:<column>: expected a JSON object, found <type>" when
  // the text is another JSON value. Thread-safe.
  static parameter_set from_json(std::string_view json_object_text, std::string where = "parameters");

  // The parameter `name`, converted to T as the list above parameter_type says. Costs a map lookup
  // and a lock (marking the parameter read), plus the value's copy (strings, vectors) or a small
  // allocation (parameter_set: it shares this set's document and read tracking; its where() is
  // where() + "." + name). Throws parameter_error if the parameter is absent, of another JSON
  // type, not whole or out of T's range (the message says the range), or an input tag that does
  // not parse; for a vector, naming the first bad element ("bins[3]"). Thread-safe (above);
  // never waits but for the tracking's lock.
  template <parameter_type T>
  T get(std::string_view name) const;

  // As get(name), but `fallback` when the parameter is absent. A parameter that is present but
  // cannot be read as T is still an error (parameter_error): a misspelt value is never replaced
  // silently by the default. Thread-safe, as get(name).
  template <parameter_type T>
  T get(std::string_view name, T fallback) const;

  // Whether the parameter is present (of any type); marks it read if so. A lookup and a lock.
  // Thread-safe.
  bool exists(std::string_view name) const;

  // The parameters' names, sorted. Does not mark them read. Allocates the list. Thread-safe.
  std::vector<std::string> names() const;

  // Every parameter of this set that no get or exists, on it or on any set got from it (or a copy
  // of either), has looked at: after a module's constructor, its unknown parameters. Sorted;
  // a nested set's parameters appear as "outer.inner" (the nested set itself only if it is empty
  // and unread), a vector is one parameter (its elements are not listed, nor what lies in a
  // vector of sets). Walks the whole set under the lock. Thread-safe; a get on another thread
  // meanwhile is or is not counted, as it comes before or after.
  std::vector<std::string> unread() const;

  // Where the set came from, for messages: from_json's `where`, e.g. "reco.json:
  // process.producers[3] 'jets'"; a nested set's is its parent's + ".name" (or ".name[i]" for an
  // element of a vector of sets). Thread-safe.
  const std::string& where() const noexcept;

  // The set as compact JSON text, keys in sorted order. Does not mark anything read. Thread-safe.
  std::string dump() const;

 private:
  friend struct fw_detail::parameter_access;
  parameter_set(std::shared_ptr<const fw_detail::parameter_node> node,
                std::shared_ptr<fw_detail::parameter_reads> reads) noexcept;

  std::shared_ptr<const fw_detail::parameter_node> node_;
  std::shared_ptr<fw_detail::parameter_reads> reads_;
};

}  // namespace heddle::fw
