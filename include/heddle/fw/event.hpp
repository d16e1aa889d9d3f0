// The event as a module sees it while it runs: its identity, the products it declared it reads,
// and the products it declared it writes. Products are owned by the event and never copied: get()
// gives a reference to the product where it lies; put() moves a value in, emplace() builds it in
// place. A product lives until its event ends, after the output modules ran.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw {

namespace detail {
struct event_state;
class graph;
struct event_access;
}  // namespace detail

// Which event: its run, its luminosity block, its number (counted from 0 over the job).
struct event_id {
  std::uint32_t run = 0;
  std::uint32_t lumi = 0;
  std::uint64_t event = 0;
  friend bool operator==(const event_id&, const event_id&) = default;
};
HEDDLE_EXPORT std::ostream& operator<<(std::ostream& out, const event_id& id);

// Not copyable or movable: the framework makes one per module call, and it is valid only during
// that call (produce, filter, analyze, write, acquire).
class HEDDLE_EXPORT event {
 public:
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  const event_id& id() const noexcept { return id_; }
  // The event's stream: which of the concurrent event slots it occupies (0 ..
  // events in flight - 1); stream modules have one instance per stream.
  unsigned stream() const noexcept { return stream_; }

  // The product `token` names (declared with consumes<T>). Costs an index lookup and a check.
  // Throws product_error (errors.hpp) if its producer did not make it in this event (it failed,
  // was not asked for, or did not put it), naming the product, both modules and the event; and
  // std::logic_error for an invalid token or one of another module.
  template <class T>
  const T& get(get_token<T> token) const {
    return *detail::product_in<T>(slot_to_read(token.index(), typeid(T)));
  }

  // Makes the product `token` names (declared with produces<T>) from `args`, in place, and returns
  // it (the module may fill it in until it returns). Small trivially copyable types live in the
  // event's own slot; others cost one allocation. Throws product_error if the module already made
  // it in this event, and what T's constructor throws (the product is then not made).
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
  event(detail::event_state& state, const detail::graph& g, std::uint32_t module, const event_id& id, unsigned stream) noexcept
      : state_(state), graph_(g), module_(module), stream_(stream), id_(id) {}

  // Where the product of consumes declaration `consumed` lies (the slot itself for a product stored
  // in place, the pointer the slot holds otherwise), and the slot product `produced` is made in.
  const void* slot_to_read(std::uint32_t consumed, const std::type_info& type) const;
  void* slot_to_write(std::uint32_t produced, const std::type_info& type);
  void made(std::uint32_t produced) noexcept;

  detail::event_state& state_;
  const detail::graph& graph_;
  std::uint32_t module_;
  unsigned stream_;
  event_id id_;
};

}  // namespace heddle::fw
