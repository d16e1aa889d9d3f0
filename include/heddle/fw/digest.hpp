// SPDX-License-Identifier: Apache-2.0
// What a product adds to a run's checksum. heddle-fw reports a checksum over every event's products
// and path decisions; the same process gives the same checksum single-threaded and with any
// number of threads and events in flight, which is how a job's reproducibility is checked.
//
// Arithmetic types and enums count by value, vectors and arrays of them element by element, and
// any other type counts nothing unless it says what it adds: a free function
//   std::uint64_t heddle_fw_digest(const T&) noexcept
// found by argument-dependent lookup (in T's namespace). Cost: called once per product per event,
// at the end of the event. The framework calls it on its threads (module_base.hpp), for several
// events at once, once the event's modules are done: no module changes the product then, so a
// heddle_fw_digest that reads only its product is thread-safe.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace heddle::fw_detail {
constexpr std::uint64_t digest_mix(std::uint64_t x) noexcept {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
template <class T>
concept user_digest = requires(const T& t) {
  { heddle_fw_digest(t) } -> std::convertible_to<std::uint64_t>;
};
}  // namespace heddle::fw_detail

namespace heddle::fw {

// What `value` adds to a checksum (above). Thread-safe where T's heddle_fw_digest is.
template <class T>
std::uint64_t product_digest(const T& value) noexcept;

}  // namespace heddle::fw

namespace heddle::fw_detail {
template <class Range>
std::uint64_t range_digest(const Range& r) noexcept {
  std::uint64_t h = r.size();
  for (const auto& x : r) h = digest_mix(h ^ heddle::fw::product_digest(x));
  return h;
}
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class T>
std::uint64_t product_digest(const T& value) noexcept {
  if constexpr (fw_detail::user_digest<T>) {
    return static_cast<std::uint64_t>(heddle_fw_digest(value));
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<std::uint64_t>(value);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<std::uint64_t>(value);  // integers count by value, so sums of products stay exact
  } else if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<std::uint32_t>(value);
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<std::uint64_t>(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (unsigned char c : value) h = (h ^ c) * 0x100000001b3ull;
    return h;
  } else if constexpr (requires { value.begin(); value.end(); value.size(); }) {
    return fw_detail::range_digest(value);
  } else {
    return 0;  // counts nothing: give the type a heddle_fw_digest to include it
  }
}
// clang-format on

}  // namespace heddle::fw
