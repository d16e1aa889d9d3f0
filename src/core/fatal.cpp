// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <cstdlib>

#include "heddle/core/detail/assert.hpp"

namespace heddle::core_detail {

namespace {

// `where` without the build machine's part of a source path: what follows its last "/src/" or
// "/include/" (a __FILE__ is absolute in an out-of-tree build), or all of it.
std::string_view shortened(std::string_view where) noexcept {
  for (std::string_view folder : {"/src/", "/include/"}) {
    const auto at = where.rfind(folder);
    if (at != std::string_view::npos) return where.substr(at + 1);
  }
  return where;
}

std::string_view prefix(fatal_kind kind) noexcept {
  switch (kind) {
    case fatal_kind::misuse: return "misuse";
    case fatal_kind::internal: return "internal error";
    case fatal_kind::unrecoverable: return "fatal";
  }
  return "fatal";
}

// Cuts `s` to at most `limit` characters, for a "%.*s".
int clipped(std::string_view s, std::size_t limit) noexcept {
  return static_cast<int>(s.size() < limit ? s.size() : limit);
}

}  // namespace

void fatal(fatal_kind kind, std::string_view what, std::string_view where) noexcept {
  // One fputs of one line: the report stays whole where other threads write to stderr too; a
  // stack buffer, since memory may be what ran out.
  char line[1600];
  const std::string_view kind_text = prefix(kind);
  where = shortened(where);
  std::snprintf(line, sizeof line, "heddle: %.*s: %.*s: %.*s\n", clipped(kind_text, 32), kind_text.data(),
                clipped(where, 256), where.data(), clipped(what, 1024), what.data());
  std::fputs(line, stderr);
  std::fflush(stderr);
  std::abort();
}

void assertion_failed(const char* condition, const char* message, const char* where) noexcept {
  char what[1200];
  std::snprintf(what, sizeof what, "`%.*s` does not hold: %s (a bug in heddle)", 512, condition, message);
  fatal(fatal_kind::internal, what, where);
}

}  // namespace heddle::core_detail
