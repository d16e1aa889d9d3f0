// SPDX-License-Identifier: Apache-2.0
// Which product a module consumes: the label of the module that put it into the event and, where
// that module puts several, the product's instance name. CMS's edm::InputTag, spelled
// "label" or "label:instance" in configurations.
//
// Departs from CMS: no third part (":process"). A heddle job is one process, so a process name
// could only ever name that process; "a:b:c" is refused rather than silently half-used.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "heddle/core/export.hpp"

namespace heddle::fw {

// A value, as a pair of strings: its calls touch nothing else, so each is thread-safe as a
// std::string's (const calls from any number of threads; a change not beside any other use).
struct HEDDLE_EXPORT input_tag {
  std::string label;     // the producing module's label; never empty in a tag made by parse()
  std::string instance;  // the product instance name; "" is the module's default product

  // The empty tag: names no product (encode() is ""). A module reads a real one from its
  // parameters.
  input_tag() = default;

  // The tag (label, instance), as given, checked so that encode() and parse() are exact inverses:
  // label not empty; neither part contains ':' nor whitespace. Costs the two strings' moves and a
  // scan of their characters. Throws std::invalid_argument naming the offending text.
  input_tag(std::string label, std::string instance);
  // A tag written as text, parse(text), from a literal or a string alike: "tracks:hits" is the
  // label "tracks" and the instance "hits".
  input_tag(const char* text) : input_tag(parse(text)) {}
  input_tag(const std::string& text) : input_tag(parse(text)) {}

  // "label" -> (label, ""), "label:instance" -> (label, instance). Costs one scan of `text`.
  // Throws std::invalid_argument, whose what() quotes `text` and says why, on "" (empty),
  // ":x" (empty label), "a:" (empty instance after ':'), "a:b:c" (more than one ':') and on any
  // whitespace character anywhere in `text`.
  static input_tag parse(std::string_view text);

  // "label", or "label:instance" when the instance is not empty; parse(t.encode()) == t for every
  // tag but the empty one. Allocates the result.
  std::string encode() const;

  friend bool operator==(const input_tag&, const input_tag&) = default;
};

// Writes t.encode(). Thread-safe as writing to `os` is.
HEDDLE_EXPORT std::ostream& operator<<(std::ostream& os, const input_tag& t);

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::input_tag;
}  // namespace heddle::fw_detail
