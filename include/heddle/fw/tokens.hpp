// Tokens: what a module gets back when it declares, in its constructor, what it reads and writes
// (module_base::consumes, produces, es_consumes), and what it hands to the event to read or write.
// A token is a small index into the declaring module's own declarations, as CMS's EDGetToken and
// EDPutToken are: reading a product through one costs an array lookup and a check that the
// product was made, never a search by name or type. Default-constructed tokens are invalid; using
// one throws std::logic_error.
#pragma once

#include <cstdint>

namespace heddle::fw {

class module_base;
class event;
class event_setup;

namespace detail {
inline constexpr std::uint32_t no_index = 0xffffffffu;
}

// Reads a product of type T: event::get(token) gives a const T&.
template <class T>
class get_token {
 public:
  get_token() = default;
  bool valid() const noexcept { return index_ != detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }  // among the module's consumes, in order

 private:
  friend class module_base;
  explicit get_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = detail::no_index;
};

// Writes a product of type T: event::put(token, value) or event::emplace(token, args...).
template <class T>
class put_token {
 public:
  put_token() = default;
  bool valid() const noexcept { return index_ != detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }  // among the module's produces, in order

 private:
  friend class module_base;
  explicit put_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = detail::no_index;
};

// Reads conditions data of type T from record R: event_setup::get(token) gives a const T&.
template <class T, class R>
class es_token {
 public:
  es_token() = default;
  bool valid() const noexcept { return index_ != detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }  // among the module's es_consumes, in order

 private:
  friend class module_base;
  explicit es_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = detail::no_index;
};

}  // namespace heddle::fw
