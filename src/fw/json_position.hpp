// SPDX-License-Identifier: Apache-2.0
// Where in a JSON text nlohmann stopped: the framework's readers (configurations, parameter sets,
// conditions files) all report malformed JSON as FILE:LINE:COLUMN.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <utility>

namespace heddle::fw_detail {

// 1-based line and column of byte offset `byte` (nlohmann counts the offending byte, 1-based).
inline std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t byte) {
  const std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

}  // namespace heddle::fw_detail
