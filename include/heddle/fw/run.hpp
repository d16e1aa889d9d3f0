// A run as its transitions see it (module_base::begin_run and end_run): its number, and the run
// products, which are made and read in the end transition, as luminosity-block products are in
// end_luminosity_block (luminosity_block.hpp; docs/fw.md, "Runs and luminosity blocks").
//
// A run product is declared with produces<T>(instance, transition::end_run) and written by its
// module's end_run through emplace / put; another module declares consumes<T>(tag, in_run) and
// reads it with get() in its own end_run, which then runs after the producer's. Products live until
// every module's end_run of the run has run, and count in that run's checksum (digest.hpp).
#pragma once

#include <cstdint>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw {

namespace detail {
struct run_state;
class graph;
struct event_access;
}  // namespace detail

// Not copyable or movable: the framework makes one per module transition, valid only during that
// call. Run transitions never run concurrently with one another nor with any event or lumi
// transition (module_base.hpp).
class HEDDLE_EXPORT run {
 public:
  run(const run&) = delete;
  run& operator=(const run&) = delete;

  std::uint32_t number() const noexcept { return number_; }  // CMS: run(); runs count from 1

  // The run product `token` names (declared with consumes<T>(tag, in_run)). Costs an index lookup
  // and a check. Throws product_error if its producer did not make it in this run (not yet: in
  // begin_run nothing is made; or it did not put it), naming the product, both modules and the
  // run; std::logic_error for an invalid token, one of another module, or one consumed from the
  // event or the luminosity block.
  template <class T>
  const T& get(get_token<T> token) const {
    return *detail::product_in<T>(slot_to_read(token.index(), typeid(T)));
  }

  // Makes the run product `token` names (declared with produces<T>(instance, transition::end_run))
  // from `args`, in place, and returns it. Only in end_run. Costs one allocation unless T is small
  // and trivially copyable. Throws product_error if the module already made it in this run or is
  // in begin_run, std::logic_error for a token of another module or of an event or
  // luminosity-block product, and what T's constructor throws (the product is then not made).
  template <class T, class... A>
  T& emplace(put_token<T> token, A&&... args) {
    void* slot = slot_to_write(token.index(), typeid(T));
    T* product = detail::make_product<T>(slot, std::forward<A>(args)...);
    made(token.index());
    return *product;
  }
  // emplace(token, std::move(value)).
  template <class T>
  void put(put_token<T> token, T value) {
    emplace(token, std::move(value));
  }

 private:
  friend struct detail::event_access;
  run(detail::run_state& state, const detail::graph& g, std::uint32_t module, bool ending) noexcept;

  const void* slot_to_read(std::uint32_t consumed, const std::type_info& type) const;
  void* slot_to_write(std::uint32_t produced, const std::type_info& type);
  void made(std::uint32_t produced) noexcept;

  detail::run_state& state_;
  const detail::graph& graph_;
  std::uint32_t module_;
  bool ending_;  // in end_run: products may be made
  std::uint32_t number_;
};

}  // namespace heddle::fw
