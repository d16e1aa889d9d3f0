// SPDX-License-Identifier: Apache-2.0
// The trace file's JSON, written through a buffer: what the writer and the kinds' writers
// (event_out, heddle/core/detail/trace_extension.hpp) append to.
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>

namespace heddle::core_detail::trace {

class json_out {
 public:
  json_out(std::FILE* f, const char* path) : f_(f), path_(path) { buf_.reserve(1 << 20); }

  json_out& raw(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= (1 << 20)) flush();
    return *this;
  }
  json_out& str(std::string_view s) {
    buf_.push_back('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(c);
      } else if (u < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", u);
        buf_.append(esc);
      } else {
        buf_.push_back(c);
      }
    }
    buf_.push_back('"');
    return *this;
  }
  json_out& num(std::int64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, r.ptr);
    return *this;
  }
  // Nanoseconds as microseconds with three decimals.
  json_out& micros(std::int64_t ns) {
    if (ns < 0) {
      buf_.push_back('-');
      ns = -ns;
    }
    num(ns / 1000);
    char frac[4] = {char('0' + ns % 1000 / 100), char('0' + ns % 100 / 10), char('0' + ns % 10), 0};
    buf_.push_back('.');
    buf_.append(frac, 3);
    return *this;
  }
  // Throws std::system_error when the file cannot be written.
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw std::system_error(errno, std::generic_category(), std::string("cannot write ") + path_);
    buf_.clear();
  }

 private:
  std::FILE* f_;
  const char* path_;
  std::string buf_;
};

}  // namespace heddle::core_detail::trace
