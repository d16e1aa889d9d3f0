// SPDX-License-Identifier: Apache-2.0
#include "heddle/fw/input_tag.hpp"

#include <algorithm>
#include <ostream>
#include <stdexcept>

namespace heddle::fw {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

[[noreturn]] void bad(std::string_view text, const char* why) {
  std::string m = "invalid input tag \"";
  m += text;
  m += "\": ";
  m += why;
  m += " (expected \"label\" or \"label:instance\")";
  throw std::invalid_argument(m);
}

bool has_space(std::string_view s) { return std::any_of(s.begin(), s.end(), is_space); }

}  // namespace

input_tag::input_tag(std::string l, std::string i) : label(std::move(l)), instance(std::move(i)) {
  const char* why = nullptr;
  if (label.empty()) why = "empty label";
  else if (label.find(':') != std::string::npos || instance.find(':') != std::string::npos)
    why = "':' inside label or instance";
  else if (has_space(label) || has_space(instance)) why = "whitespace";
  if (why) bad(encode(), why);
}

input_tag input_tag::parse(std::string_view text) {
  const auto colon = text.find(':');
  const bool has_colon = colon != std::string_view::npos;
  const std::string_view label = text.substr(0, colon);
  const std::string_view instance = has_colon ? text.substr(colon + 1) : std::string_view{};
  if (text.empty()) bad(text, "empty");
  if (has_space(text)) bad(text, "whitespace");
  if (instance.find(':') != std::string_view::npos) bad(text, "more than one ':'");
  if (label.empty()) bad(text, "empty label");
  if (has_colon && instance.empty()) bad(text, "empty instance after ':'");
  input_tag t;
  t.label = label;
  t.instance = instance;
  return t;
}
std::string input_tag::encode() const { return instance.empty() ? label : label + ":" + instance; }

std::ostream& operator<<(std::ostream& os, const input_tag& t) { return os << t.encode(); }

}  // namespace heddle::fw
