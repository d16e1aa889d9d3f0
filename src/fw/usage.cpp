// SPDX-License-Identifier: Apache-2.0
#include "usage.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace heddle::fw_detail {

namespace {
double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// A "Name:  value kB" field of /proc/self/status, or 0.
std::uint64_t status_field(const char* name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(name);
  while (std::getline(in, line))
    if (line.compare(0, n, name) == 0) return std::strtoull(line.c_str() + n, nullptr, 10);
  return 0;
}
}  // namespace

usage_probe::usage_probe() : t0_(std::chrono::steady_clock::now()), cpu0_(process_cpu_s()) {}

double usage_probe::wall_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

double usage_probe::cpu_s() const { return process_cpu_s() - cpu0_; }

void usage_probe::reset_peak_rss() noexcept {
  if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);  // 5: reset the peak RSS
    std::fclose(f);
  }
}

std::uint64_t usage_probe::peak_rss_bytes() noexcept {
  if (std::uint64_t kb = status_field("VmHWM:")) return kb * 1024;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;
}

unsigned usage_probe::os_threads() noexcept { return static_cast<unsigned>(status_field("Threads:")); }

}  // namespace heddle::fw_detail
