// SPDX-License-Identifier: Apache-2.0
// The layers' kinds (install_kind): a fixed table, filled as libraries load (before main, in any
// order) and read when a session stops, possibly from a static destructor (HEDDLE_TRACE's): so it
// is constant-initialised and never destroyed.
#include "kinds.hpp"

#include <mutex>

namespace heddle::core_detail::trace {

namespace {

struct installed_kind {
  kind k = kind::task;
  kind_format format;
};

// More than every layer's kinds together; install_kind refuses beyond.
constexpr std::size_t max_installed = 256;

struct installed_kinds {
  std::mutex m;
  installed_kind entries[max_installed];
  std::size_t count = 0;
};

constinit installed_kinds installed;

}  // namespace

bool install_kind(kind k, const kind_format& format) noexcept {
  if (layer_of(k) == 0 || !format.write) return false;
  std::lock_guard lock(installed.m);
  for (std::size_t i = 0; i < installed.count; ++i)
    if (installed.entries[i].k == k) return installed.entries[i].format.write == format.write;
  if (installed.count == max_installed) return false;
  installed.entries[installed.count++] = {k, format};
  return true;
}

kind_table::kind_table() {
  auto put = [this](kind k, const kind_format& f) {
    auto& codes = layers_[layer_of(k)];
    const std::size_t code = static_cast<std::uint16_t>(k) & 0xff;
    if (codes.size() <= code) codes.resize(code + 1);
    codes[code] = f;
  };
  for (std::uint16_t k = 0; k < static_cast<std::uint16_t>(kind::core_count_); ++k)
    put(static_cast<kind>(k), core_format(static_cast<kind>(k)));
  std::lock_guard lock(installed.m);
  for (std::size_t i = 0; i < installed.count; ++i) put(installed.entries[i].k, installed.entries[i].format);
}

}  // namespace heddle::core_detail::trace
