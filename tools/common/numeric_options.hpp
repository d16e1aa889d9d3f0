// SPDX-License-Identifier: Apache-2.0
// Validators for the tools' numeric options, applied to the text before CLI11 converts it.
// CLI11 2.1 reads an unsigned option with strtoull in base 0: "-3" wraps to 2^64 - 3 (a run of
// --events -3 never ends), "010" is octal 8 and an overflow becomes 2^64 - 1; its Range and
// PositiveNumber let "nan" through and print DBL_MAX in full. These take plain decimal text only
// and say what they expected, so that a bad value fails as "--events: expected a whole number
// from 1 to ..., not '-3'" (exit 2 in every tool).
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace heddle::tool {

// A whole number in [min, max], written in decimal digits only: no sign, no base prefix, no
// leading zero.
inline CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  const std::string range = "from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const std::string bad = "expected a whole number " + range + ", not '" + text + "'";
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return bad;
        errno = 0;
        const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE || v < min || v > max) return bad;
        // CLI11 would read "010" as octal 8, and a check cannot rewrite the text it is given.
        if (text.size() > 1 && text[0] == '0') return bad + " (no leading zeros)";
        return {};
      },
      "INT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

// A finite real number, greater than 0 (or, with zero_allowed, not less than 0).
inline CLI::Validator real_number(bool zero_allowed) {
  const std::string what = zero_allowed ? "a finite number, 0 or more" : "a finite number greater than 0";
  return CLI::Validator(
      [zero_allowed, what](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0 ||
            (v == 0 && !zero_allowed))
          return "expected " + what + ", not '" + text + "'";
        return {};
      },
      zero_allowed ? "FLOAT >= 0" : "FLOAT > 0");
}

}  // namespace heddle::tool
