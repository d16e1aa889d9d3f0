// SPDX-License-Identifier: Apache-2.0
// Abilities: what a module kind takes as template arguments (global::EDProducer<ExternalWork>), as
// CMS's module templates do (edm::global::EDProducer<edm::ExternalWork, ...>). An ability adds to
// the module what it needs and nothing to modules without it: the virtual calls its author
// overrides, its state, and the calls through which the processors reach it. A module lists any
// of them, in any order, each once; a kind refuses, at compile time, a type that is no ability, an
// ability listed twice, and an ability the kind does not take.
//
// How an ability is built (detail/kind_base.hpp stacks them; docs/fw.md, "Abilities"):
//   - a tag, the type users list: struct ExternalWork {};
//   - fw_detail::ability<Tag>: allowed(kind), whether a kind takes it, and layer<Base, Kind>, a class
//     template deriving from Base that the kind stacks between module_base and its role's class
//     (EDProducer's produce). The layer declares the virtual calls the module's author overrides
//     (pure where the ability cannot work without them: a module lacking one is abstract and does
//     not compile), keeps the ability's state, and overrides, final, the virtual calls of
//     module_base through which the processors reach it (ExternalWork: the private call_acquire,
//     called through fw_detail::module_access; an ability may as well take over a transition, as a
//     per-lumi cache takes begin_luminosity_block). The layers of two abilities stack on each
//     other, so their calls and state add up.
//   - where processors must know that a module has the ability, a query on module_base that the
//     kind's constructor sets (external_work());
//   - where a requirement cannot be a pure virtual (ExternalWork: one of two spellings of acquire),
//     fw_detail::check_module_type<M> states it, where the framework learns the module's type
//     (process::add<M>, HEDDLE_FW_MODULE(M)).
// Per-lumi and per-run caches and summaries (CMS's LuminosityBlockCache<T>, RunCache<T>,
// LuminosityBlockSummaryCache<T>) would come this way: a tag template, pure virtuals that make the
// cache at the lumi's begin and close it at its end, the caches of the lumis in flight kept in the
// layer, and the layer taking over the lumi transitions (final) to call them.
#pragma once

#include <type_traits>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/fw/async_handle.hpp"
#include "heddle/fw/event.hpp"
#include "heddle/fw/event_setup.hpp"
#include "heddle/fw/module_base.hpp"

namespace heddle::fw {

// The module's acquire() runs first and starts asynchronous work; produce (filter, analyze, write)
// runs once its handle is completed or its future is ready, and acquire() has returned, with no
// thread waiting in between. Any kind, any role. The framework calls acquire as the module's kind
// calls its event methods (global::, for several events at once); the handle is completed from
// any thread (async_handle.hpp). The module overrides one of the two spellings of
// acquire (a module that overrides neither does not compile where it is added: process::add<M>,
// HEDDLE_FW_MODULE(M)); a module without ExternalWork has no acquire.
struct ExternalWork {};

}  // namespace heddle::fw

namespace heddle::fw_detail {

using fw::ExternalWork;

// The abilities: fw_detail::ability<Tag> for each tag (ExternalWork's below); the primary template
// says that a type is no ability.
template <class Tag>
struct ability {};

template <class... Abilities>
inline constexpr bool external_work = (std::is_same_v<Abilities, ExternalWork> || ...);

// The default acquire(..., handle) of ExternalWork modules: the future-returning acquire's result.
HEDDLE_EXPORT void acquire_through_future(async_handle& handle, future<void>&& f);
// What a module's future-returning acquire does if the module overrides neither acquire; reached
// only by a module whose type the framework never saw (a module_factory that returns a
// unique_ptr<module_base>): the others do not compile.
[[noreturn]] HEDDLE_EXPORT void no_acquire(const module_base& m);

// ExternalWork's layer: acquire, in its two spellings, const in global:: modules as their event
// methods are (Const).
template <class Base, bool Const>
class external_work_layer;

template <class Base>
class external_work_layer<Base, true> : public Base {
 public:
  // Starts the asynchronous work and completes `handle` when it is over (async_handle.hpp), or
  // returns a future of it (the other spelling). By default this one completes the handle when the
  // other's future is ready.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) const {
    acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) const { no_acquire(*this); }

 private:
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

template <class Base>
class external_work_layer<Base, false> : public Base {
 public:
  // As above, for stream:: and one:: modules: not const.
  virtual void acquire(const event& e, const event_setup& setup, async_handle handle) {
    acquire_through_future(handle, acquire(e, setup));
  }
  virtual future<void> acquire(const event& /*e*/, const event_setup& /*setup*/) { no_acquire(*this); }

 private:
  void call_acquire(const event& e, const event_setup& setup, async_handle handle) final {
    acquire(e, setup, std::move(handle));
  }
};

template <>
struct ability<ExternalWork> {
  static constexpr bool allowed(module_kind) noexcept { return true; }
  template <class Base, module_kind Kind>
  using layer = external_work_layer<Base, Kind == module_kind::global>;
};

// Which class declares module M's acquire of each spelling, found by deducing it from &M::acquire
// (only the spelling's own signature deduces); a layer's, if M overrides it nowhere.
template <class B>
B* handle_acquire_owner(void (B::*)(const event&, const event_setup&, async_handle) const);
template <class B>
B* handle_acquire_owner(void (B::*)(const event&, const event_setup&, async_handle));
template <class B>
B* future_acquire_owner(future<void> (B::*)(const event&, const event_setup&) const);
template <class B>
B* future_acquire_owner(future<void> (B::*)(const event&, const event_setup&));

template <class T>
inline constexpr bool is_external_work_layer = false;
template <class B, bool Const>
inline constexpr bool is_external_work_layer<external_work_layer<B, Const>> = true;

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class M>
concept inherits_handle_acquire =
    requires { handle_acquire_owner(&M::acquire); } &&
    is_external_work_layer<std::remove_pointer_t<decltype(handle_acquire_owner(&M::acquire))>>;
template <class M>
concept inherits_future_acquire =
    requires { future_acquire_owner(&M::acquire); } &&
    is_external_work_layer<std::remove_pointer_t<decltype(future_acquire_owner(&M::acquire))>>;
// clang-format on

// What module type M must meet beyond compiling as a class, checked where the framework learns
// the type: an ExternalWork module overrides one of the acquires (each of its declarations hides
// both of the layer's, so M's own or an intermediate base's acquire ends the search).
template <class M>
constexpr void check_module_type() noexcept {
  static_assert(!(inherits_handle_acquire<M> && inherits_future_acquire<M>),
                "heddle::fw: the module lists ExternalWork but overrides no acquire: override "
                "acquire(const event&, const event_setup&, async_handle) "
                "or future<void> acquire(const event&, const event_setup&)");
}

}  // namespace heddle::fw_detail
