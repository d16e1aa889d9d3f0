// Which product a module reads: the label of the module that makes it and the product's instance
// name (empty for the default instance), written "label" or "label:instance", as CMS's InputTag.
#pragma once

#include <string>
#include <string_view>

#include "heddle/core/export.hpp"

namespace heddle::fw {

struct HEDDLE_EXPORT input_tag {
  std::string label;
  std::string instance;

  input_tag() = default;
  input_tag(std::string l, std::string i) : label(std::move(l)), instance(std::move(i)) {}
  // A tag written as text, "label" or "label:instance" (parse), from a literal or a string alike.
  input_tag(const char* text) : input_tag(parse(text)) {}
  input_tag(const std::string& text) : input_tag(parse(text)) {}

  // "label" or "label:instance"; std::invalid_argument naming the text for anything else.
  static input_tag parse(std::string_view text);
  std::string encode() const { return instance.empty() ? label : label + ":" + instance; }
  friend bool operator==(const input_tag&, const input_tag&) = default;
};

}  // namespace heddle::fw
