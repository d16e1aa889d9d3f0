// SPDX-License-Identifier: Apache-2.0
// How the framework handles a product of a type it does not know: where it lives, how it dies, and
// what it adds to the run's checksum. One constant table per product type, made where the module
// declares the product (produces<T>), so that the framework itself stays free of templates.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "heddle/fw/digest.hpp"

namespace heddle::fw_detail {

struct product_ops {
  const std::type_info* type;
  // Stored in the event's 8-byte slot itself (small, trivially copyable and destructible types:
  // counters, flags, sums): no allocation per event. Otherwise the slot holds a pointer to the
  // product, made with new.
  bool in_place;
  // Its digest is its 8 bytes as they lie in the slot (64-bit integers): the checksum reads them
  // without a call.
  bool digest_is_value;
  void (*destroy)(void* slot) noexcept;
  std::uint64_t (*digest)(const void* product) noexcept;
};

// A module's read or write through a token: the event's product slot it names, and the declared
// type (checked against the token's, a pointer comparison in the common case).
struct product_ref {
  std::uint32_t product;
  const std::type_info* type;
};

template <class T>
inline constexpr bool in_place_product =
    sizeof(T) <= sizeof(void*) &&
    alignof(T) <= alignof(void*) && std::is_trivially_copyable_v<T>&& std::is_trivially_destructible_v<T>;

// The product of type T in its slot: the slot itself for a product stored in place, behind the
// pointer the slot holds otherwise.
template <class T>
const T* product_in(const void* slot) noexcept {
  if constexpr (in_place_product<T>) return std::launder(static_cast<const T*>(slot));
  else return *static_cast<T* const*>(slot);
}

template <class T>
inline constexpr product_ops ops_of{
    &typeid(T),
    in_place_product<T>,
    in_place_product<T>&& std::is_integral_v<T> && sizeof(T) == 8 && !heddle::fw_detail::user_digest<T>,
    [](void* slot) noexcept {
      if constexpr (!in_place_product<T>) delete *static_cast<T**>(slot);
    },
    [](const void* product) noexcept -> std::uint64_t {
      return heddle::fw::product_digest(*static_cast<const T*>(product));
    },
};

// Where a product of type T is made in its event's slot: in the slot, or on the heap.
template <class T, class... A>
T* make_product(void* slot, A&&... args) {
  if constexpr (in_place_product<T>) {
    return ::new (slot) T(std::forward<A>(args)...);
  } else {
    T* p = new T(std::forward<A>(args)...);
    *static_cast<T**>(slot) = p;
    return p;
  }
}

}  // namespace heddle::fw_detail
