// SPDX-License-Identifier: Apache-2.0
// The process options the timing modules add (busyWaitScaleFactor, timeScale, wait): registered
// with the framework's reader (config_keys.hpp, added_option), which checks them where a file gives
// them and keeps them in process_config::options, where the modules read them (modules.cpp).
#include <cstdio>

#include "heddle/fw/detail/config_keys.hpp"
#include "study.hpp"

namespace heddle::fw::study {

namespace {

// Each after the framework's key it is listed behind in the unknown-key message.
const fw_detail::option_registration busy_wait_scale_option{
    {"busyWaitScaleFactor", "nSimultaneousEvents",
     [](const fw_detail::json& v, const fw_detail::place& p) { (void)fw_detail::positive(v, p); }}};
const fw_detail::option_registration time_scale_option{
    {"timeScale", "nThreads",
     [](const fw_detail::json& v, const fw_detail::place& p) { (void)fw_detail::positive(v, p); }}};
const fw_detail::option_registration wait_option{
    {"wait", "timeScale", [](const fw_detail::json& v, const fw_detail::place& p) {
       const std::string w = fw_detail::string(v, p);
       if (!parse_wait_mode(w)) p.fail("unknown wait mode '" + w + "' (known: busy, sleep, timer, configured)");
     }}};

// A number as set_option reads it back: exactly (17 significant digits).
std::string text_of(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

}  // namespace

const char* to_string(wait_mode w) noexcept {
  switch (w) {
    case wait_mode::as_configured: return "configured";
    case wait_mode::busy: return "busy";
    case wait_mode::sleep: return "sleep";
    case wait_mode::timer: return "timer";
  }
  return "?";
}

std::optional<wait_mode> parse_wait_mode(std::string_view s) noexcept {
  if (s == "configured") return wait_mode::as_configured;
  if (s == "busy") return wait_mode::busy;
  if (s == "sleep") return wait_mode::sleep;
  if (s == "timer") return wait_mode::timer;
  return std::nullopt;
}

timing_options timing_of(const parameter_set& options) {
  timing_options t;
  // Checked where the file or set_option gave them: a bad mode cannot reach here.
  t.wait = parse_wait_mode(options.get<std::string>("wait", "configured")).value_or(wait_mode::as_configured);
  t.time_scale = options.get<double>("timeScale", 1.0);
  t.busy_wait_scale = options.get<double>("busyWaitScaleFactor", 0.0);
  return t;
}

process_config with_timing(process_config config, const timing_options& timing) {
  set_option(config, "wait", to_string(timing.wait), "heddle::fw::study::with_timing");
  set_option(config, "timeScale", text_of(timing.time_scale), "heddle::fw::study::with_timing");
  if (timing.busy_wait_scale > 0)
    set_option(config, "busyWaitScaleFactor", text_of(timing.busy_wait_scale), "heddle::fw::study::with_timing");
  return config;
}

}  // namespace heddle::fw::study
