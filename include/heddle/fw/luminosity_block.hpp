// A luminosity block as its transitions see it (module_base::begin_luminosity_block and
// end_luminosity_block): its identity, and the luminosity-block products, which are made and read
// in the end transition. A run is divided into luminosity blocks ("lumis", counted from 1 in each
// run) of run_options::events_per_lumi events; with run_options::concurrent_lumis > 1 the threaded
// processor starts the events of the next lumi while the last events of the previous one finish
// (docs/fw.md, "Runs and luminosity blocks").
//
// A luminosity-block product is declared with produces<T>(instance, transition::end_luminosity_block)
// and written by its module's end_luminosity_block through emplace / put; another module declares
// consumes<T>(tag, in_lumi) and reads it with get() in its own end_luminosity_block, which then runs
// after the producer's. Products live until every module's end_luminosity_block of the lumi has run,
// and count in the run's checksum (digest.hpp), once per lumi.
#pragma once

#include <compare>
#include <cstdint>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw {

namespace detail {
struct lumi_state;
class graph;
struct event_access;
}  // namespace detail

// Which luminosity block: its run and its number in the run (from 1).
struct luminosity_block_id {
  std::uint32_t run = 0;
  std::uint32_t lumi = 0;
  friend bool operator==(const luminosity_block_id&, const luminosity_block_id&) = default;
  friend auto operator<=>(const luminosity_block_id&, const luminosity_block_id&) = default;
};

// Not copyable or movable: the framework makes one per module transition, valid only during that
// call. Transitions of one lumi never run concurrently with each other; see module_base.hpp for
// what they may overlap.
class HEDDLE_EXPORT luminosity_block {
 public:
  luminosity_block(const luminosity_block&) = delete;
  luminosity_block& operator=(const luminosity_block&) = delete;

  const luminosity_block_id& id() const noexcept { return id_; }
  std::uint32_t run() const noexcept { return id_.run; }
  std::uint32_t number() const noexcept { return id_.lumi; }  // CMS: luminosityBlock()

  // The luminosity-block product `token` names (declared with consumes<T>(tag, in_lumi)). Costs an
  // index lookup and a check. Throws product_error if its producer did not make it in this lumi
  // (not yet: in begin_luminosity_block nothing is made; or it did not put it), naming the product,
  // both modules and the lumi; std::logic_error for an invalid token, one of another module, or
  // one consumed from the event.
  template <class T>
  const T& get(get_token<T> token) const {
    return *detail::product_in<T>(slot_to_read(token.index(), typeid(T)));
  }

  // Makes the luminosity-block product `token` names (declared with produces<T>(instance,
  // transition::end_luminosity_block)) from `args`, in place, and returns it. Only in
  // end_luminosity_block. Costs one allocation unless T is small and trivially copyable. Throws
  // product_error if the module already made it in this lumi or is in begin_luminosity_block,
  // std::logic_error for a token of another module or of an event product, and what T's
  // constructor throws (the product is then not made).
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
  luminosity_block(detail::lumi_state& state, const detail::graph& g, std::uint32_t module, bool ending) noexcept;

  const void* slot_to_read(std::uint32_t consumed, const std::type_info& type) const;
  void* slot_to_write(std::uint32_t produced, const std::type_info& type);
  void made(std::uint32_t produced) noexcept;

  detail::lumi_state& state_;
  const detail::graph& graph_;
  std::uint32_t module_;
  bool ending_;  // in end_luminosity_block: products may be made
  luminosity_block_id id_;
};

}  // namespace heddle::fw
