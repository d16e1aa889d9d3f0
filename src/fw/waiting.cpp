// SPDX-License-Identifier: Apache-2.0
#include "heddle/fw/waiting.hpp"

#include <algorithm>
#include <ctime>
#include <vector>

namespace heddle::fw {

void busy_wait(std::uint64_t iterations) noexcept {
  // Each iteration is a chain of dependent multiply-xorshift rounds (~50 ns on a 2–3 GHz core,
  // about the cost of an iteration of the study's loop, so that its busyWaitScaleFactor values
  // give times of the right order here too). The asm keeps the compiler from folding the chain.
  std::uint64_t x = iterations | 1;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    for (int r = 0; r < 24; ++r) {
      x = x * 0x9e3779b97f4a7c15ull + 1;
      x ^= x >> 29;
    }
    asm volatile("" : "+r"(x));
  }
}

double calibrate_busy_wait(std::chrono::milliseconds round, int rounds) {
  using clock = std::chrono::steady_clock;
  // First a short probe to size the rounds, then `rounds` timed rounds; the median resists a VM's
  // stolen time.
  std::uint64_t n = 1000;
  for (;;) {
    auto t0 = clock::now();
    busy_wait(n);
    auto dt = clock::now() - t0;
    if (dt >= std::chrono::milliseconds(5) || n > (std::uint64_t{1} << 40)) {
      const double per_s = double(n) / std::chrono::duration<double>(dt).count();
      n = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(per_s * std::chrono::duration<double>(round).count()));
      break;
    }
    n *= 4;
  }
  std::vector<double> rates;
  for (int r = 0; r < std::max(1, rounds); ++r) {
    auto t0 = clock::now();
    busy_wait(n);
    rates.push_back(double(n) / std::chrono::duration<double>(clock::now() - t0).count());
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

void sleep_seconds(double seconds) noexcept {
  if (!(seconds > 0)) return;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - double(ts.tv_sec)) * 1e9);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace heddle::fw
