// SPDX-License-Identifier: Apache-2.0
// How the configuration reader reads a JSON object: a table of its keys (name, whether required,
// how the value is read: its type and range, and where it goes), which both reads the object and
// lists the keys it knows when it finds another. An option is added by one row of its table.
// Every error is one line naming the file and the place (config.cpp's `place`). Private to
// heddle::fw: nlohmann-json is not part of the public headers.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/errors.hpp"

namespace heddle::fw_detail {

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

inline const char* kind(const json& v) { return v.type_name(); }

// Every key of `obj` must be one of `known`; else "unknown key 'k' (known here: ...)", or with a
// module type's name, "key 'k' does not apply to type T (it takes: ...)".
inline void check_keys(const json& obj, const place& p, std::span<const std::string_view> known,
                       std::string_view type = {}) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    if (type.empty()) p.fail("unknown key '" + key + "' (known here: " + list + ")");
    p.fail("key '" + key + "' does not apply to type " + std::string(type) + " (it takes: " + list + ")");
  }
}

inline const json& require(const json& obj, const char* key, const place& p) {
  auto it = obj.find(key);
  if (it == obj.end()) p.fail(std::string("missing required key '") + key + "'");
  return *it;
}

inline const json& object(const json& v, const place& p) {
  if (!v.is_object()) p.fail(std::string("expected an object, found ") + kind(v));
  return v;
}

inline const json& array(const json& v, const place& p) {
  if (!v.is_array()) p.fail(std::string("expected an array, found ") + kind(v));
  return v;
}

inline std::string string(const json& v, const place& p) {
  if (!v.is_string()) p.fail(std::string("expected a string, found ") + kind(v));
  return v.get<std::string>();
}

inline bool boolean(const json& v, const place& p) {
  if (!v.is_boolean()) p.fail(std::string("expected true or false, found ") + kind(v));
  return v.get<bool>();
}

// A time in seconds: finite and not negative.
inline double seconds(const json& v, const place& p) {
  if (!v.is_number()) p.fail(std::string("expected a time in seconds, found ") + kind(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) p.fail("time is not finite");
  if (d < 0) p.fail("negative time " + v.dump());
  return d;
}

inline double positive(const json& v, const place& p) {
  if (!v.is_number()) p.fail(std::string("expected a number, found ") + kind(v));
  double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0) p.fail("expected a positive number, found " + v.dump());
  return d;
}

// A count in [min, max]: a non-negative integer, or a string of one ("200", as some
// configurations write it).
inline std::uint64_t count(const json& v, const place& p, std::uint64_t min = 0, std::uint64_t max = UINT64_MAX) {
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

// One key of an object read into a `Target`: `read` checks the value's type and range (with the
// readers above, which say what was expected) and stores it. A key whose `read` is null is known
// but read by the caller ("@label", "@type" of a module).
template <class Target>
struct key {
  std::string_view name;
  bool required = false;
  void (*read)(const json& value, const place& at, Target& into) = nullptr;
};

// The names of a table's keys, in its order: the list an unknown key's message shows.
template <class Target>
std::vector<std::string_view> names_of(std::span<const key<Target>> table) {
  std::vector<std::string_view> names;
  names.reserve(table.size());
  for (const key<Target>& k : table) names.push_back(k.name);
  return names;
}

// Reads `obj` by `table`: first every key must be one of the table's (check_keys, naming `type`
// when given), then each key of the table, in the table's order, is read where present and
// reported where required and absent.
template <class Target>
void read_keys(const json& obj, const place& p, std::span<const key<Target>> table, Target& into,
               std::string_view type = {}) {
  check_keys(obj, p, names_of(table), type);
  for (const key<Target>& k : table) {
    auto it = obj.find(k.name);
    if (it == obj.end()) {
      if (k.required) p.fail("missing required key '" + std::string(k.name) + "'");
      continue;
    }
    if (k.read) k.read(*it, p.at(std::string(k.name)), into);
  }
}

// A key of process.options that code beside the framework's own adds, with the module types that
// read it: the CMS study's timing modules add busyWaitScaleFactor, timeScale and wait
// (src/fw/study/options.cpp). The reader checks it where the file has it (`check` throws through `at`,
// as a row of option_keys would), lists it among the known keys right after the key named
// `after` (at the end when that is none of them), and keeps it in process_config::options, where
// the modules that need it read it. The framework's parser itself owns no such key.
struct added_option {
  std::string_view name;
  std::string_view after;
  void (*check)(const json& value, const place& at);
};

// Registers `row` for as long as it lives, like a module type (registry.hpp): a static object of
// the file that reads the option. Exported: the study's built-in plugin registers its options from
// outside the library.
class HEDDLE_EXPORT option_registration {
 public:
  explicit option_registration(added_option row) noexcept;
  ~option_registration();
  option_registration(const option_registration&) = delete;
  option_registration& operator=(const option_registration&) = delete;

 private:
  added_option row_;
};

// The options registered now, in the order they were registered. A copy: taken under the lock.
std::vector<added_option> added_options();

}  // namespace heddle::fw_detail
