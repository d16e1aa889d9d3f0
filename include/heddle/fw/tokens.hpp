// SPDX-License-Identifier: Apache-2.0
// Tokens: what a module gets back when it declares, in its constructor, what it reads and writes
// (module_base::consumes, produces, es_consumes), and what it hands to the event to read or write.
// A token is a small index into the declaring module's own declarations, as CMS's EDGetToken and
// EDPutToken are: reading a product through one costs an array lookup and a check that the
// product was made, never a search by name or type. Default-constructed tokens are invalid; using
// one throws std::logic_error. A token is a plain value: copied and read from any thread, as an int.
#pragma once

#include <cstdint>

namespace heddle::fw {

class module_base;
class event;
class event_setup;

}  // namespace heddle::fw

namespace heddle::fw_detail {
inline constexpr std::uint32_t no_index = 0xffffffffu;
}  // namespace heddle::fw_detail

namespace heddle::fw {

// When a product is made (module_base::produces): in an event, in a luminosity block's end
// transition (end_luminosity_block) or in a run's (end_run). CMS spells the second produces<T,
// edm::Transition::EndLuminosityBlock>(instance); here it is produces<T>(instance,
// transition::end_luminosity_block), and the third produces<T>(instance, transition::end_run).
enum class transition : std::uint8_t { event, end_luminosity_block, end_run };

// Where a product is read from (module_base::consumes): the event (the default), the luminosity
// block (luminosity_block::get, in end_luminosity_block) or the run (run::get, in end_run). CMS's
// consumes<T, edm::InLumi>(tag) is consumes<T>(tag, in_lumi) here, consumes<T, edm::InRun>(tag)
// consumes<T>(tag, in_run): the same tokens read all three, as CMS's EDGetTokenT does.
enum class branch_type : std::uint8_t { in_event, in_lumi, in_run };
inline constexpr branch_type in_event = branch_type::in_event;
inline constexpr branch_type in_lumi = branch_type::in_lumi;
inline constexpr branch_type in_run = branch_type::in_run;

}  // namespace heddle::fw

namespace heddle::fw_detail {
// The transition that makes the products a consumes `where` reads.
constexpr fw::transition made_at(fw::branch_type where) noexcept {
  return where == fw::in_event  ? fw::transition::event
         : where == fw::in_lumi ? fw::transition::end_luminosity_block
                                : fw::transition::end_run;
}
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Reads a product of type T: event::get(token) gives a const T& (luminosity_block::get for a
// product consumed in_lumi, run::get for one consumed in_run).
template <class T>
class get_token {
 public:
  get_token() = default;
  // Thread-safe, both (a plain value).
  bool valid() const noexcept { return index_ != fw_detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }  // among the module's consumes, in order

 private:
  friend class module_base;
  explicit get_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = fw_detail::no_index;
};

// Writes a product of type T: event::put(token, value) or event::emplace(token, args...)
// (luminosity_block's, for a product made at transition::end_luminosity_block; run's, at
// transition::end_run).
template <class T>
class put_token {
 public:
  put_token() = default;
  // Thread-safe, both (a plain value).
  bool valid() const noexcept { return index_ != fw_detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }  // among the module's produces, in order

 private:
  friend class module_base;
  explicit put_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = fw_detail::no_index;
};

// Reads conditions data of type T from record R: event_setup::get(token) gives a const T&.
template <class T, class R>
class es_token {
 public:
  es_token() = default;
  // Thread-safe, both (a plain value).
  bool valid() const noexcept { return index_ != fw_detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }  // among the module's es_consumes, in order

 private:
  friend class module_base;
  explicit es_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = fw_detail::no_index;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::branch_type;
using fw::es_token;
using fw::event;
using fw::event_setup;
using fw::get_token;
using fw::in_event;
using fw::in_lumi;
using fw::in_run;
using fw::module_base;
using fw::put_token;
using fw::transition;
}  // namespace heddle::fw_detail
