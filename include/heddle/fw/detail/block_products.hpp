// SPDX-License-Identifier: Apache-2.0
// What luminosity_block and run share: reading and making their products (made in the end
// transition, read by later end transitions). The class gives its slots; this base gives the typed
// calls, inline.
#pragma once

#include <cstdint>
#include <typeinfo>
#include <utility>

#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw_detail {

// Block: luminosity_block or run, which define (privately, befriending this base)
//   const void* slot_to_read(std::uint32_t consumed, const std::type_info&) const;
//   void* slot_to_write(std::uint32_t produced, const std::type_info&);
//   void made(std::uint32_t produced) noexcept;
template <class Block>
class block_products {
 public:
  // The product `token` names (declared with consumes<T>(tag, in_lumi) or consumes<T>(tag, in_run)).
  // Costs an index lookup and a check. Throws product_error if its producer did not make it in this
  // block (not yet: in the begin transition nothing is made; or it did not put it), naming the
  // product, both modules and the block; std::logic_error for an invalid token, one of another
  // module, or one consumed from the event (or, for a run, from the luminosity block). Thread-safe,
  // during the module's transition (the block is valid only then); never waits.
  template <class T>
  const T& get(get_token<T> token) const {
    return *product_in<T>(self().slot_to_read(token.index(), typeid(T)));
  }

  // Makes the product `token` names (declared with produces<T>(instance,
  // transition::end_luminosity_block) or produces<T>(instance, transition::end_run)) from `args`, in
  // place, and returns it. Only in the end transition. Costs one allocation unless T is small and
  // trivially copyable. Throws product_error if the module already made it in this block or is in
  // the begin transition, std::logic_error for a token of another module or of another kind of
  // product, and what T's constructor throws (the product is then not made). Not thread-safe: the
  // transition's own call (or one task of it at a time); never waits.
  template <class T, class... A>
  T& emplace(put_token<T> token, A&&... args) {
    void* slot = self().slot_to_write(token.index(), typeid(T));
    T* product = make_product<T>(slot, std::forward<A>(args)...);
    self().made(token.index());
    return *product;
  }
  // emplace(token, std::move(value)), with its thread safety.
  template <class T>
  void put(put_token<T> token, T value) {
    emplace(token, std::move(value));
  }

 protected:
  block_products() = default;
  ~block_products() = default;

 private:
  const Block& self() const noexcept { return static_cast<const Block&>(*this); }
  Block& self() noexcept { return static_cast<Block&>(*this); }
};

}  // namespace heddle::fw_detail
