#include "heddle/fw/input_tag.hpp"

#include <stdexcept>

namespace heddle::fw {

input_tag input_tag::parse(std::string_view text) {
  const auto colon = text.find(':');
  input_tag t(std::string(text.substr(0, colon)), colon == std::string_view::npos ? "" : std::string(text.substr(colon + 1)));
  if (t.label.empty() || (colon != std::string_view::npos && t.instance.empty()) || t.instance.find(':') != std::string::npos)
    throw std::invalid_argument("heddle::fw::input_tag: '" + std::string(text) + "' is not \"label\" or \"label:instance\"");
  return t;
}

}  // namespace heddle::fw
