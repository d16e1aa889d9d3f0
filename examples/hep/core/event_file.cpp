// SPDX-License-Identifier: Apache-2.0
#include "event_file.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>

namespace hep {

namespace {

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
  throw input_error(path + ":" + std::to_string(line) + ": " + what);
}

std::string_view shorten(std::string_view s) {
  constexpr std::size_t most = 60;
  return s.size() > most ? s.substr(0, most) : s;
}

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Splits `text` at blanks into at most 6 fields (more counts as 6: an error anyway).
std::size_t split(std::string_view text, std::string_view (&fields)[6]) {
  std::size_t n = 0, i = 0;
  while (n < 6) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    const std::size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    fields[n++] = text.substr(start, i - start);
  }
  return n;
}

template <class T>
bool parse(std::string_view field, T& value) {
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size();
}

class reader {
 public:
  explicit reader(const std::string& path) : path_(path) {}

  std::vector<generated_event> read() {
    std::ifstream in(path_);
    if (!in) throw input_error(path_ + ": cannot open: " + std::strerror(errno));
    std::string text;
    while (std::getline(in, text)) {
      ++line_;
      take(text);
    }
    if (in.bad()) throw input_error(path_ + ": read error after line " + std::to_string(line_));
    end_event(true);
    if (events_.empty()) throw input_error(path_ + ": no events (no particle lines)");
    return std::move(events_);
  }

 private:
  void take(std::string_view text) {
    std::size_t first = 0;
    while (first < text.size() && is_space(text[first])) ++first;
    text.remove_prefix(first);
    if (text.empty()) return;
    if (text.front() == '#') {
      if (text.starts_with("#END")) end_event();
      else if (text.starts_with("#SUBSTART")) start_sub_event();
      return;
    }
    std::string_view f[6];
    const std::size_t n = split(text, f);
    if (n < 4 || n > 5)
      fail(path_, line_,
           "expected 'px py pz E' or 'px py pz E pdg_id', found " + std::to_string(n == 6 ? 6 : n) +
               (n == 6 ? " or more" : "") + " fields: '" + std::string(shorten(text)) + "'");
    particle p;
    double* values[4] = {&p.p.px, &p.p.py, &p.p.pz, &p.p.e};
    for (std::size_t k = 0; k < 4; ++k)
      if (!parse(f[k], *values[k]))
        fail(path_, line_, "field " + std::to_string(k + 1) + " is not a number: '" + std::string(shorten(f[k])) + "'");
    if (n == 5 && !parse(f[4], p.pdg_id))
      fail(path_, line_, "field 5 (the PDG id) is not an integer: '" + std::string(shorten(f[4])) + "'");
    if (!in_event_) begin_event(false);
    current().interactions.back().push_back(p);
  }

  generated_event& current() { return events_.back(); }

  void begin_event(bool sub_events) {
    events_.push_back({{}, line_});
    in_event_ = true;
    if (!sub_events) current().interactions.emplace_back();
  }

  void start_sub_event() {
    if (!in_event_) begin_event(true);
    else check_last_interaction();
    current().interactions.emplace_back();
    sub_event_line_ = line_;
  }

  void check_last_interaction() {
    if (!current().interactions.empty() && current().interactions.back().empty())
      fail(path_, sub_event_line_, "sub-event without particles");
  }

  // At "#END" and at the end of the file.
  void end_event(bool at_end_of_file = false) {
    if (!in_event_) {
      if (!at_end_of_file)
        fail(path_, line_, "event without particles (#END with no particle line since the last one)");
      return;
    }
    check_last_interaction();
    in_event_ = false;
  }

  const std::string& path_;
  std::vector<generated_event> events_;
  std::size_t line_ = 0, sub_event_line_ = 0;
  bool in_event_ = false;
};

}  // namespace

std::vector<generated_event> read_event_file(const std::string& path) { return reader(path).read(); }

std::size_t event_library::particles() const noexcept {
  std::size_t n = 0;
  for (const interaction& i : hard_scatters) n += i.size();
  for (const interaction& i : minimum_bias) n += i.size();
  return n;
}

event_library load_event_library(const std::vector<std::string>& hard_files,
                                 const std::vector<std::string>& pileup_files) {
  if (hard_files.empty()) throw input_error("no hard-scatter files");
  if (pileup_files.empty()) throw input_error("no pile-up files");
  event_library lib;
  for (const std::string& path : hard_files)
    for (generated_event& e : read_event_file(path)) lib.hard_scatters.push_back(std::move(e.interactions.front()));
  for (const std::string& path : pileup_files)
    for (generated_event& e : read_event_file(path)) {
      if (e.interactions.size() < 2)
        fail(path, e.line,
             "pile-up event without minimum-bias sub-events (expected '#SUBSTART' before each interaction, "
             "the first being the hard scatter)");
      for (std::size_t i = 1; i < e.interactions.size(); ++i) lib.minimum_bias.push_back(std::move(e.interactions[i]));
    }
  return lib;
}

}  // namespace hep
