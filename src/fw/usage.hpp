// SPDX-License-Identifier: Apache-2.0
// What a run cost the process: wall and CPU time, peak RSS, OS threads.
#pragma once

#include <chrono>
#include <cstdint>

namespace heddle::fw_detail {

class usage_probe {
 public:
  usage_probe();
  double wall_s() const;
  double cpu_s() const;  // user + system of every thread since construction

  // Restarts the kernel's peak-RSS counter (VmHWM) at the current RSS, where Linux allows it, so
  // that one process can measure several runs.
  static void reset_peak_rss() noexcept;
  static std::uint64_t peak_rss_bytes() noexcept;
  static unsigned os_threads() noexcept;  // "Threads:" of /proc/self/status

 private:
  std::chrono::steady_clock::time_point t0_;
  double cpu0_;
};

}  // namespace heddle::fw_detail
