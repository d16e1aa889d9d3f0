// SPDX-License-Identifier: Apache-2.0
// Serialisation of active-message arguments and results: a byte buffer written by `writer` and read
// back, bounds-checked, by `reader`. Arithmetic types, enums and trivially copyable structs travel
// bitwise; bool (checked to be 0 or 1), std::string, std::vector, std::array, std::pair, std::tuple,
// std::optional and std::map are built in, member by member where a bit pattern could be invalid; a user
// type joins by specialising heddle::offload::serializer (below). Raw pointers and references
// cannot travel: they would point into the sender's memory, and are rejected at compile time.
//
// A reader never trusts a length it reads: a truncated, oversized or corrupt buffer throws
// decode_error (what and at which offset), never reads past the end, and never allocates more than
// the bytes left could hold.
//
// Thread safety: a writer or a reader is one thread's (not thread-safe: it lives on the stack of the
// call it serves); read(), write() and the serializers touch only their arguments, so calls on
// different writers and readers are thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "heddle/core/export.hpp"

namespace heddle::offload {

class HEDDLE_EXPORT decode_error : public std::runtime_error {
 public:
  ~decode_error() override;
  using std::runtime_error::runtime_error;
};

// The bytes of a call's arguments or result. The first 64 bytes lie in the writer itself, so a
// small call (a few numbers, a short string) allocates nothing; beyond that the buffer doubles on the
// heap. Neither copied nor moved: a writer lives on the stack of the call it serves.
class writer {
 public:
  static constexpr std::size_t inline_bytes = 64;

  writer() noexcept = default;
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;
  ~writer() {
    if (data_ != inline_) delete[] data_;
  }

  // Appends n bytes. Costs a memcpy; a heap allocation only when the bytes outgrow the buffer.
  void bytes(const void* p, std::size_t n) {
    if (n == 0) return;
    if (n > capacity_ - size_) [[unlikely]]
      grow(n);
    std::memcpy(data_ + size_, p, n);
    size_ += n;
  }
  std::size_t size() const noexcept { return size_; }
  // What was written, valid until the next write.
  std::span<const std::byte> data() const noexcept { return {data_, size_}; }

 private:
  void grow(std::size_t n) {
    if (n > SIZE_MAX / 2 - size_) throw std::length_error("heddle::offload::writer: too many bytes");
    std::size_t capacity = capacity_ * 2;
    while (capacity < size_ + n) capacity *= 2;
    std::byte* bigger = new std::byte[capacity];
    std::memcpy(bigger, data_, size_);
    if (data_ != inline_) delete[] data_;
    data_ = bigger;
    capacity_ = capacity;
  }

  std::byte* data_ = inline_;
  std::size_t size_ = 0;
  std::size_t capacity_ = inline_bytes;
  alignas(16) std::byte inline_[inline_bytes];
};

class reader {
 public:
  explicit reader(std::span<const std::byte> in) noexcept : in_(in) {}

  void bytes(void* p, std::size_t n) {
    need(n, "value");
    if (n == 0) return;  // an empty vector's data() may be null, and memcpy(nullptr, ..., 0) is undefined
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  // A count of elements of at least `min_element_bytes` each: checked against what is left, so a
  // corrupt count cannot make the caller allocate gigabytes.
  std::size_t count(std::size_t min_element_bytes) {
    std::uint64_t n = 0;
    bytes(&n, sizeof n);
    const std::size_t left = in_.size() - pos_;
    if (min_element_bytes > 0 && n > left / min_element_bytes)
      throw decode_error("heddle::offload: corrupt message: a count of " + std::to_string(n) + " at offset " +
                         std::to_string(pos_ - sizeof n) + " exceeds the " + std::to_string(left) + " bytes left");
    return static_cast<std::size_t>(n);
  }
  std::size_t offset() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return in_.size() - pos_; }
  // Everything has been read: bytes left over mean the two sides disagree on the types.
  void expect_end(const char* what) const {
    if (pos_ != in_.size())
      throw decode_error(std::string("heddle::offload: corrupt message: ") + std::to_string(in_.size() - pos_) +
                         " bytes left over after the " + what + " at offset " + std::to_string(pos_));
  }

 private:
  void need(std::size_t n, const char* what) const {
    if (n > in_.size() - pos_)
      throw decode_error(std::string("heddle::offload: truncated message: a ") + what + " of " + std::to_string(n) +
                         " bytes at offset " + std::to_string(pos_) + ", " + std::to_string(in_.size() - pos_) +
                         " left");
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

// The extension point: serializer<T>::write(writer&, const T&) and serializer<T>::read(reader&).
template <class T, class Enable = void>
struct serializer {
  static_assert(sizeof(T) == 0,
                "heddle::offload: this type cannot travel in a message: specialise heddle::offload::serializer<T> "
                "with write(writer&, const T&) and read(reader&), or make it trivially copyable");
};

template <class T>
inline constexpr bool is_pointer_like_v = std::is_pointer_v<T> || std::is_member_pointer_v<T> ||
                                          std::is_null_pointer_v<T> || std::is_reference_v<T>;

template <class T>
void write(writer& w, const T& v) {
  static_assert(!is_pointer_like_v<T>, "heddle::offload: raw pointers and references cannot travel in a message");
  serializer<T>::write(w, v);
}
template <class T>
T read(reader& r) {
  static_assert(!is_pointer_like_v<T>, "heddle::offload: raw pointers and references cannot travel in a message");
  return serializer<T>::read(r);
}

// The standard templates that are sometimes trivially copyable but still travel member by member:
// a bitwise optional or pair could carry an invalid bool (its flag) from a corrupt message.
template <class T>
struct is_std_composite : std::false_type {};
template <class T>
struct is_std_composite<std::optional<T>> : std::true_type {};
template <class A, class B>
struct is_std_composite<std::pair<A, B>> : std::true_type {};
template <class... T>
struct is_std_composite<std::tuple<T...>> : std::true_type {};
template <class T, std::size_t N>
struct is_std_composite<std::array<T, N>> : std::true_type {};

// Bitwise: trivially copyable types other than pointers, bool and the composites above. Every bit
// pattern of an arithmetic type or an enum with a fixed underlying type is a valid value; a user
// struct travels bitwise too, so a struct holding a bool (or another type with invalid patterns)
// should specialise serializer to check what it reads.
template <class T>
inline constexpr bool bitwise_v = std::is_trivially_copyable_v<T> && !is_pointer_like_v<T> &&
                                  !std::is_same_v<T, bool> && !is_std_composite<T>::value;

template <class T>
struct serializer<T, std::enable_if_t<bitwise_v<T>>> {
  static void write(writer& w, const T& v) { w.bytes(&v, sizeof v); }
  static T read(reader& r) {
    static_assert(std::is_default_constructible_v<T>, "heddle::offload: a bitwise type must be default-constructible");
    T v;
    r.bytes(&v, sizeof v);
    return v;
  }
};

template <>
struct serializer<bool> {
  static void write(writer& w, bool b) {
    const std::uint8_t v = b;
    w.bytes(&v, 1);
  }
  static bool read(reader& r) {
    std::uint8_t v = 0;
    r.bytes(&v, 1);
    if (v > 1) throw decode_error("heddle::offload: corrupt message: a bool of value " + std::to_string(v));
    return v == 1;
  }
};

template <class Char>
struct serializer<std::basic_string<Char>> {
  static void write(writer& w, const std::basic_string<Char>& s) {
    const std::uint64_t n = s.size();
    w.bytes(&n, sizeof n);
    w.bytes(s.data(), s.size() * sizeof(Char));
  }
  static std::basic_string<Char> read(reader& r) {
    std::basic_string<Char> s(r.count(sizeof(Char)), Char{});
    r.bytes(s.data(), s.size() * sizeof(Char));
    return s;
  }
};

template <class T, class A>
struct serializer<std::vector<T, A>> {
  static void write(writer& w, const std::vector<T, A>& v) {
    const std::uint64_t n = v.size();
    w.bytes(&n, sizeof n);
    if constexpr (bitwise_v<T>) {
      w.bytes(v.data(), v.size() * sizeof(T));
    } else {
      for (const T& x : v) offload::write(w, x);
    }
  }
  static std::vector<T, A> read(reader& r) {
    std::vector<T, A> v;
    if constexpr (bitwise_v<T>) {
      v.resize(r.count(sizeof(T)));
      r.bytes(v.data(), v.size() * sizeof(T));
    } else {
      const std::size_t n = r.count(1);  // every element takes at least a byte
      v.reserve(n);
      for (std::size_t i = 0; i < n; ++i) v.push_back(offload::read<T>(r));
    }
    return v;
  }
};

template <class T, std::size_t N>
struct serializer<std::array<T, N>> {
  // N * sizeof(T), not sizeof a: an empty array is one byte large, and its data() may be null.
  static void write(writer& w, const std::array<T, N>& a) {
    if constexpr (N == 0) {
      (void)w, (void)a;
    } else if constexpr (bitwise_v<T>) {
      w.bytes(a.data(), N * sizeof(T));
    } else {
      for (const T& x : a) offload::write(w, x);
    }
  }
  static std::array<T, N> read(reader& r) {
    if constexpr (N == 0) {
      (void)r;
      return {};
    } else if constexpr (bitwise_v<T> && std::is_default_constructible_v<T>) {
      std::array<T, N> a;
      r.bytes(a.data(), N * sizeof(T));
      return a;
    } else {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<T, N>{((void)I, offload::read<T>(r))...};
      }
      (std::make_index_sequence<N>());
    }
  }
};

template <class A, class B>
struct serializer<std::pair<A, B>> {
  static void write(writer& w, const std::pair<A, B>& p) {
    offload::write(w, p.first);
    offload::write(w, p.second);
  }
  static std::pair<A, B> read(reader& r) {
    A a = offload::read<A>(r);  // in order: a braced pair would not promise it
    B b = offload::read<B>(r);
    return {std::move(a), std::move(b)};
  }
};

template <class... T>
struct serializer<std::tuple<T...>> {
  static void write(writer& w, const std::tuple<T...>& t) {
    std::apply([&](const T&... x) { (offload::write(w, x), ...); }, t);
  }
  static std::tuple<T...> read(reader& r) {
    // Braced initialisation evaluates left to right: the elements are read in order.
    return std::tuple<T...>{offload::read<T>(r)...};
  }
};

template <class T>
struct serializer<std::optional<T>> {
  static void write(writer& w, const std::optional<T>& o) {
    const std::uint8_t has = o.has_value();
    w.bytes(&has, 1);
    if (o) offload::write(w, *o);
  }
  static std::optional<T> read(reader& r) {
    std::uint8_t has = 0;
    r.bytes(&has, 1);
    if (has > 1)
      throw decode_error("heddle::offload: corrupt message: an optional's flag of value " + std::to_string(has));
    if (!has) return std::nullopt;
    return offload::read<T>(r);
  }
};

template <class K, class V, class C, class A>
struct serializer<std::map<K, V, C, A>> {
  static void write(writer& w, const std::map<K, V, C, A>& m) {
    const std::uint64_t n = m.size();
    w.bytes(&n, sizeof n);
    for (const auto& [k, v] : m) {
      offload::write(w, k);
      offload::write(w, v);
    }
  }
  static std::map<K, V, C, A> read(reader& r) {
    std::map<K, V, C, A> m;
    for (std::size_t i = 0, n = r.count(1); i < n; ++i) {
      K k = offload::read<K>(r);
      V v = offload::read<V>(r);
      if (!m.emplace(std::move(k), std::move(v)).second)
        throw decode_error("heddle::offload: corrupt message: a map with a repeated key before offset " +
                           std::to_string(r.offset()));
    }
    return m;
  }
};

}  // namespace heddle::offload

// The am layer's internals (heddle::am_detail) name these unqualified.
namespace heddle::am_detail {
using offload::decode_error;
using offload::reader;
using offload::writer;
}  // namespace heddle::am_detail
