// SPDX-License-Identifier: Apache-2.0
// Random streams that depend on what is being computed, never on which thread computes it: every
// random draw of the job comes from a generator seeded from the event's (run, lumi, event) and a
// per-module salt, so an event's products are the same single-threaded, threaded, in any order.
#pragma once

#include <cstdint>
#include <string_view>

namespace hep {

// splitmix64's finaliser: a bijection of 64-bit words whose output bits each depend on every input bit.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
constexpr std::uint64_t mix(std::uint64_t h, std::uint64_t x) noexcept { return mix(h ^ mix(x)); }

// A salt from a module's name (FNV-1a), so two modules of one event draw different streams.
constexpr std::uint64_t salt(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// The seed of one module's random stream in one event.
constexpr std::uint64_t event_seed(std::uint64_t job_seed, std::uint64_t salt, std::uint32_t run, std::uint32_t lumi,
                                   std::uint64_t event) noexcept {
  return mix(mix(mix(mix(job_seed, salt), run), lumi), event);
}

}  // namespace hep
