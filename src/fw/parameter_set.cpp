// SPDX-License-Identifier: Apache-2.0
// A module's parameters over nlohmann-json. A set is two shared pointers: its node (the JSON
// object, held through an aliasing pointer that owns the whole document, and where it is) and the
// document's read tracking (the addresses of the values looked at, under a mutex). Nested sets
// point into the same document and share the tracking, so the top-level set's unread() sees what
// was read through any of them.
#include "heddle/fw/parameter_set.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <unordered_set>
#include <utility>

#include "heddle/fw/detail/parameter_set_json.hpp"
#include "json_position.hpp"

namespace heddle::fw {

using json = nlohmann::json;

}  // namespace heddle::fw

namespace heddle::fw_detail {

using json = nlohmann::json;

struct parameter_node {
  std::shared_ptr<const json> value;  // this set's object; owns the whole document
  std::string where;                  // this set's where()
  std::string root_where;             // the top-level set's, which messages start with
  std::string path;                   // the prefix of parameter names in messages: "", "cuts.", "jets[2]."
};

struct parameter_reads {
  std::mutex lock;
  std::unordered_set<const json*> read;  // values of the document that a get or exists found
};

struct parameter_access {
  static parameter_set make(std::shared_ptr<const parameter_node> node,
                            std::shared_ptr<parameter_reads> reads) noexcept {
    return parameter_set(std::move(node), std::move(reads));
  }
  static const json& value_of(const parameter_set& set) noexcept { return *set.node_->value; }
};

// A top-level set: `document` is the module's object.
static parameter_set make_root(json document, std::string where) {
  auto node = std::make_shared<parameter_node>();
  node->value = std::make_shared<const json>(std::move(document));
  node->root_where = where;
  node->where = std::move(where);
  return parameter_access::make(std::move(node), std::make_shared<parameter_reads>());
}

parameter_set make_parameter_set(json object, std::string where) {
  if (!object.is_object()) throw config_error(where + ": expected a JSON object, found " + object.type_name());
  return make_root(std::move(object), std::move(where));
}

const json& json_of(const parameter_set& set) noexcept { return parameter_access::value_of(set); }

}  // namespace heddle::fw_detail

namespace heddle::fw {

parameter_error::~parameter_error() = default;

parameter_error::parameter_error(std::string where, std::string name, const std::string& what)
    : config_error(where + ": parameter '" + name + "': " + what), where_(std::move(where)), name_(std::move(name)) {}

namespace {

using fw_detail::parameter_access;
using fw_detail::parameter_node;
using fw_detail::parameter_reads;

// "string \"abc\"", "number 2.5", "array [1,2,3,...]": a JSON value for a message, at most about
// 40 characters of it, cut on a UTF-8 character boundary.
std::string describe(const json& v) {
  if (v.is_null()) return "null";
  std::string text = v.dump();
  constexpr std::size_t max = 40;
  if (text.size() > max) {
    std::size_t cut = max - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
    text += "...";
  }
  return std::string(v.type_name()) + " " + text;
}

// One value being read: the parameter `key` of `node` (its element `index`, for a vector's).
struct reading {
  static constexpr std::size_t whole = std::numeric_limits<std::size_t>::max();

  const parameter_node& node;
  const std::shared_ptr<parameter_reads>& reads;
  std::string_view key;
  std::size_t index = whole;

  reading element(std::size_t i) const { return {node, reads, key, i}; }

  // "bins" or "bins[3]", relative to the node.
  std::string relative_name() const {
    std::string n(key);
    if (index != whole) {
      n += '[';  // appended piecewise: g++ 12 warns (-Wrestrict) wrongly about "[" + s + "]"
      n += std::to_string(index);
      n += ']';
    }
    return n;
  }

  // `found` as the message shows it.
  [[noreturn]] void fail_found(std::string_view what, std::string_view expected, std::string_view found) const {
    std::string m(what);
    m += " (expected ";
    m += expected;
    m += ", found ";
    m += found;
    m += ')';
    throw parameter_error(node.root_where, node.path + relative_name(), m);
  }
  [[noreturn]] void fail(std::string_view what, std::string_view expected, const json& found) const {
    fail_found(what, expected, describe(found));
  }
};

// How each parameter type reads a JSON value: `name` and `plural` for messages, from() converts.
template <class T>
struct conv;

template <>
struct conv<bool> {
  static std::string name() { return "boolean"; }
  static std::string plural() { return "booleans"; }
  static bool from(const json& v, const reading& r) {
    if (!v.is_boolean()) r.fail("wrong type", name(), v);
    return v.get<bool>();
  }
};

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class T>
  requires std::integral<T> && (!std::same_as<T, bool>)
struct conv<T> {
  static std::string name() { return std::is_signed_v<T> ? "integer" : "unsigned integer"; }
  static std::string plural() { return name() + "s"; }
  static std::string range() {
    return name() + " in [" + std::to_string(std::numeric_limits<T>::min()) + ", " +
           std::to_string(std::numeric_limits<T>::max()) + "]";
  }
  static T from(const json& v, const reading& r) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (!std::in_range<T>(u)) r.fail("out of range", range(), v);
      return static_cast<T>(u);
    }
    if (v.is_number_integer()) {
      const auto i = v.get<std::int64_t>();
      if (!std::in_range<T>(i)) r.fail("out of range", range(), v);
      return static_cast<T>(i);
    }
    if (!v.is_number()) r.fail("wrong type", name(), v);
    // A float ("1e3", or a whole number too large for nlohmann's 64-bit integers): whole and
    // within T's range. The bounds are powers of two, exact in a double.
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::trunc(d)) r.fail("not a whole number", name(), v);
    const double top = std::ldexp(1.0, std::numeric_limits<T>::digits);
    if (d >= top || d < (std::is_signed_v<T> ? -top : 0.0)) r.fail("out of range", range(), v);
    return static_cast<T>(d);
  }
};

template <class T>
  requires std::floating_point<T>
struct conv<T> {
  static std::string name() { return "number"; }
  static std::string plural() { return "numbers"; }
  static T from(const json& v, const reading& r) {
    if (!v.is_number()) r.fail("wrong type", name(), v);
    const double d = v.get<double>();
    if (std::abs(d) > std::numeric_limits<T>::max()) {
      r.fail("out of range", name() + " of magnitude at most " + json(std::numeric_limits<T>::max()).dump(), v);
    }
    return static_cast<T>(d);
  }
};
// clang-format on

template <>
struct conv<std::string> {
  static std::string name() { return "string"; }
  static std::string plural() { return "strings"; }
  static std::string from(const json& v, const reading& r) {
    if (!v.is_string()) r.fail("wrong type", name(), v);
    return v.get<std::string>();
  }
};

template <>
struct conv<input_tag> {
  static std::string name() { return "input tag"; }
  static std::string plural() { return "input tags"; }
  static input_tag from(const json& v, const reading& r) {
    if (!v.is_string()) r.fail("wrong type", "input tag (a string \"label\" or \"label:instance\")", v);
    const auto& text = v.get_ref<const std::string&>();
    try {
      return input_tag::parse(text);
    } catch (const std::invalid_argument& e) {
      // input_tag's message is "invalid input tag \"<text>\": <why> (expected ...)"; keep <why>.
      std::string_view why = e.what();
      const std::string_view head = "invalid input tag \"";
      const std::size_t start = head.size() + text.size() + 3;
      if (why.size() > start && why.starts_with(head)) why = why.substr(start, why.find(" (expected", start) - start);
      r.fail("invalid input tag: " + std::string(why), "input tag \"label\" or \"label:instance\"", v);
    }
  }
};

template <>
struct conv<parameter_set> {
  static std::string name() { return "parameter set"; }
  static std::string plural() { return "parameter sets"; }
  static parameter_set from(const json& v, const reading& r) {
    if (!v.is_object()) r.fail("wrong type", "parameter set (a JSON object)", v);
    const std::string relative = r.relative_name();
    auto child = std::make_shared<parameter_node>();
    child->value = std::shared_ptr<const json>(r.node.value, &v);  // aliasing: keeps the document alive
    child->where = r.node.where + "." + relative;
    child->root_where = r.node.root_where;
    child->path = r.node.path + relative + ".";
    return parameter_access::make(std::move(child), r.reads);
  }
};

template <class X>
struct conv<std::vector<X>> {
  static std::string name() { return "list of " + conv<X>::plural(); }
  static std::vector<X> from(const json& v, const reading& r) {
    if (!v.is_array()) r.fail("wrong type", name(), v);
    std::vector<X> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(conv<X>::from(v[i], r.element(i)));
    return out;
  }
};

// The value of parameter `name`, marked read; nullptr if absent.
const json* look_up(const parameter_node& node, parameter_reads& reads, std::string_view name) {
  const auto it = node.value->find(name);
  if (it == node.value->end()) return nullptr;
  const json* v = &*it;
  std::lock_guard guard(reads.lock);
  reads.read.insert(v);
  return v;
}

[[noreturn]] void missing(const parameter_node& node, const std::shared_ptr<parameter_reads>& reads,
                          std::string_view name, std::string_view expected) {
  std::string present;
  std::size_t shown = 0;
  for (auto it = node.value->begin(); it != node.value->end(); ++it) {
    if (shown++ == 12) {
      present += ", ...";
      break;
    }
    present += present.empty() ? "only: " : ", ";
    present += it.key();
  }
  reading{node, reads, name}.fail_found("missing", expected, present.empty() ? "an empty set" : present);
}

// Every unread parameter under `object`, as prefix + key.
void collect_unread(const json& object, const std::string& prefix, const std::unordered_set<const json*>& read,
                    std::vector<std::string>& out) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const json& v = it.value();
    if (v.is_object() && !v.empty()) {
      collect_unread(v, prefix + it.key() + ".", read, out);
    } else if (!read.contains(&v)) {
      out.push_back(prefix + it.key());
    }
  }
}

std::string at(const std::string& where, std::pair<std::size_t, std::size_t> lc) {
  return where + ":" + std::to_string(lc.first) + ":" + std::to_string(lc.second) + ": ";
}

const parameter_set& empty_set() {
  static const parameter_set empty = fw_detail::make_parameter_set(json::object(), "parameters");
  return empty;
}

}  // namespace

parameter_set::parameter_set() : parameter_set(empty_set()) {}

parameter_set::parameter_set(std::shared_ptr<const fw_detail::parameter_node> node,
                             std::shared_ptr<fw_detail::parameter_reads> reads) noexcept
    : node_(std::move(node)), reads_(std::move(reads)) {}

parameter_set parameter_set::from_json(std::string_view text, std::string where) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // nlohmann's message is "[json.exception.parse_error.101] parse error at line L, column C: why".
    std::string why = e.what();
    if (auto pos = why.find(": "); pos != std::string::npos) why = why.substr(pos + 2);
    throw config_error(at(where, fw_detail::line_column(text, e.byte)) + "malformed JSON: " + why);
  } catch (const json::out_of_range& e) {
    // A number beyond a double ("1e400"): nlohmann says "... number overflow parsing '1e400'"
    // without a place; the place is the literal's first appearance.
    std::string why = e.what();
    if (auto pos = why.find("] "); pos != std::string::npos) why = why.substr(pos + 2);
    std::size_t byte = 0;
    if (auto open = why.find('\''); open != std::string::npos && why.back() == '\'') {
      byte = text.find(std::string_view(why).substr(open + 1, why.size() - open - 2)) + 1;  // npos + 1 == 0
    }
    throw config_error(at(where, fw_detail::line_column(text, byte)) + "malformed JSON: " + why);
  }
  if (!doc.is_object()) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    throw config_error(at(where, fw_detail::line_column(text, first + 1)) + "expected a JSON object, found " +
                       doc.type_name());
  }
  return fw_detail::make_root(std::move(doc), std::move(where));
}

template <parameter_type T>
T parameter_set::get(std::string_view name) const {
  const json* v = look_up(*node_, *reads_, name);
  if (!v) missing(*node_, reads_, name, conv<T>::name());
  return conv<T>::from(*v, reading{*node_, reads_, name});
}

template <parameter_type T>
T parameter_set::get(std::string_view name, T fallback) const {
  const json* v = look_up(*node_, *reads_, name);
  if (!v) return fallback;
  return conv<T>::from(*v, reading{*node_, reads_, name});
}

bool parameter_set::exists(std::string_view name) const { return look_up(*node_, *reads_, name) != nullptr; }

std::vector<std::string> parameter_set::names() const {
  std::vector<std::string> out;
  out.reserve(node_->value->size());
  for (auto it = node_->value->begin(); it != node_->value->end(); ++it) out.push_back(it.key());
  return out;  // sorted: nlohmann's objects are std::maps
}

std::vector<std::string> parameter_set::unread() const {
  std::vector<std::string> out;
  {
    std::lock_guard guard(reads_->lock);
    collect_unread(*node_->value, "", reads_->read, out);
  }
  std::sort(out.begin(), out.end());  // "a.b" and "a-b": prefixes do not keep the map's order
  return out;
}

const std::string& parameter_set::where() const noexcept { return node_->where; }

std::string parameter_set::dump() const { return node_->value->dump(); }

// The types of parameter_type, each compiled here once.
#define HEDDLE_FW_PARAMETER_TYPE(T)                                                   \
  template T parameter_set::get<T>(std::string_view) const;                           \
  template T parameter_set::get<T>(std::string_view, T) const;                        \
  template std::vector<T> parameter_set::get<std::vector<T>>(std::string_view) const; \
  template std::vector<T> parameter_set::get<std::vector<T>>(std::string_view, std::vector<T>) const;
HEDDLE_FW_PARAMETER_TYPE(bool)
HEDDLE_FW_PARAMETER_TYPE(int)
HEDDLE_FW_PARAMETER_TYPE(unsigned)
HEDDLE_FW_PARAMETER_TYPE(long)
HEDDLE_FW_PARAMETER_TYPE(unsigned long)
HEDDLE_FW_PARAMETER_TYPE(long long)
HEDDLE_FW_PARAMETER_TYPE(unsigned long long)
HEDDLE_FW_PARAMETER_TYPE(double)
HEDDLE_FW_PARAMETER_TYPE(float)
HEDDLE_FW_PARAMETER_TYPE(std::string)
HEDDLE_FW_PARAMETER_TYPE(input_tag)
HEDDLE_FW_PARAMETER_TYPE(parameter_set)
#undef HEDDLE_FW_PARAMETER_TYPE

}  // namespace heddle::fw
