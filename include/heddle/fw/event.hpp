// SPDX-License-Identifier: Apache-2.0
// The event as a module sees it while it runs: its identity, the products it declared it reads,
// and the products it declared it writes. Products are owned by the event and never copied: get()
// gives a reference to the product where it lies; put() moves a value in, emplace() builds it in
// place. A product lives until its event ends, after the output modules ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <typeinfo>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw_detail {
struct event_state;
class graph;
struct event_access;
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Which event: its run, its luminosity block, its number (counted from 0 over the job).
struct event_id {
  std::uint32_t run = 0;
  std::uint32_t lumi = 0;
  std::uint64_t event = 0;
  friend bool operator==(const event_id&, const event_id&) = default;
};
// Writes "run R lumi L event E". Thread-safe as writing to `out` is.
HEDDLE_EXPORT std::ostream& operator<<(std::ostream& out, const event_id& id);

// Not copyable or movable: the framework makes one per module call, and it is valid only during
// that call (produce, filter, analyze, write, acquire): its calls are the module's, from that call
// or from tasks the call waits for, never from work that outlives it (acquire's asynchronous work
// included).
class HEDDLE_EXPORT event {
 public:
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  // Which event. Thread-safe (during the call).
  const event_id& id() const noexcept { return id_; }
  // The event's stream: which of the concurrent event slots it occupies (0 ..
  // events in flight - 1); stream modules have one instance per stream. Thread-safe (during the call).
  unsigned stream() const noexcept { return stream_; }

  // The product `token` names (declared with consumes<T>). Inline: an index, a type check (a
  // pointer comparison) and a check that the product was made. Throws product_error
  // (errors.hpp) if its producer did not make it in this event (it failed, or ran without putting
  // it), naming the product, both modules and the event; std::logic_error for an invalid token or
  // one of another module. Thread-safe (during the call); never waits.
  template <class T>
  const T& get(get_token<T> token) const {
    const std::uint32_t i = token.index();
    if (i >= reads_size_ || !same(reads_[i].type, typeid(T))) [[unlikely]]
      bad_token("get", i);
    const std::uint32_t p = reads_[i].product;
    if (!made_[p].load(std::memory_order_acquire)) [[unlikely]]
      not_made(i);
    return *fw_detail::product_in<T>(&slots_[p]);
  }

  // Makes the product `token` names (declared with produces<T>) from `args`, in place, and returns
  // it (the module may fill it in until it returns). Small trivially copyable types live in the
  // event's own slot; others cost one allocation. Throws product_error if the module already made
  // it in this event, std::logic_error for a token it did not get, and what T's constructor throws
  // (the product is then not made). Not thread-safe for one token: two emplace calls of the same
  // token at once escape the made-twice check; different tokens may be made from different tasks
  // of the call. Never waits.
  template <class T, class... A>
  T& emplace(put_token<T> token, A&&... args) {
    const std::uint32_t i = token.index();
    if (i >= writes_size_ || !same(writes_[i].type, typeid(T))) [[unlikely]]
      bad_token("put", i);
    const std::uint32_t p = writes_[i].product;
    if (made_[p].load(std::memory_order_relaxed)) [[unlikely]]
      made_twice(i);
    T* product = fw_detail::make_product<T>(&slots_[p], std::forward<A>(args)...);
    made_[p].store(1, std::memory_order_release);  // a plain store: the flag is this product's alone
    return *product;
  }
  // emplace(token, std::move(value)), with its thread safety.
  template <class T>
  void put(put_token<T> token, T value) {
    emplace(token, std::move(value));
  }

 private:
  friend struct fw_detail::event_access;
  event(const fw_detail::graph& g, std::uint32_t module, const event_id& id, unsigned stream, void** slots,
        std::atomic<std::uint8_t>* made, const fw_detail::product_ref* reads, std::uint32_t reads_size,
        const fw_detail::product_ref* writes, std::uint32_t writes_size) noexcept
      : graph_(g),
        module_(module),
        stream_(stream),
        id_(id),
        slots_(slots),
        made_(made),
        reads_(reads),
        writes_(writes),
        reads_size_(reads_size),
        writes_size_(writes_size) {}

  static bool same(const std::type_info* declared, const std::type_info& asked) noexcept {
    return declared == &asked || *declared == asked;
  }
  [[noreturn]] void bad_token(const char* what, std::uint32_t index) const;
  [[noreturn]] void not_made(std::uint32_t consumed) const;
  [[noreturn]] void made_twice(std::uint32_t produced) const;

  const fw_detail::graph& graph_;  // for messages
  std::uint32_t module_;
  unsigned stream_;
  event_id id_;
  void** slots_;                          // the event's product slots
  std::atomic<std::uint8_t>* made_;       // per product, set once it is made
  const fw_detail::product_ref* reads_;   // the module's consumes, by token index
  const fw_detail::product_ref* writes_;  // its produces, by token index
  std::uint32_t reads_size_, writes_size_;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::event_id;
}  // namespace heddle::fw_detail
