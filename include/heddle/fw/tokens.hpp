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

// When a product is made (module_base::produces): in an event, or in a luminosity block's end
// transition (end_luminosity_block). CMS spells the second produces<T, edm::Transition::
// EndLuminosityBlock>(instance); here it is produces<T>(instance, transition::end_luminosity_block).
enum class transition : std::uint8_t { event, end_luminosity_block };

// Where a product is read from (module_base::consumes): the event (the default) or the luminosity
// block (luminosity_block::get, in end_luminosity_block). CMS's consumes<T, edm::InLumi>(tag) is
// consumes<T>(tag, in_lumi) here: the same tokens read both, as CMS's EDGetTokenT does.
enum class branch_type : std::uint8_t { in_event, in_lumi };
inline constexpr branch_type in_event = branch_type::in_event;
inline constexpr branch_type in_lumi = branch_type::in_lumi;

// Reads a product of type T: event::get(token) gives a const T& (luminosity_block::get for a
// product consumed in_lumi).
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

// Writes a product of type T: event::put(token, value) or event::emplace(token, args...)
// (luminosity_block's, for a product made at transition::end_luminosity_block).
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
