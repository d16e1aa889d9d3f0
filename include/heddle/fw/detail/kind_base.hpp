// SPDX-License-Identifier: Apache-2.0
// The one base of every module kind (global.hpp, stream.hpp, one.hpp): module_base made with the
// kind and the role, the kind's own calls (one::'s uses_resource), then a layer per ability the
// module lists (abilities.hpp), stacked in the order listed. The kind's class goes on top with its
// role's event method (produce, filter, analyze, write) and the call() that runs it. One chain of
// single inheritance: one vtable pointer, and the processors' calls into a module are the same
// virtual calls whatever its abilities.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "heddle/fw/abilities.hpp"
#include "heddle/fw/module_base.hpp"

namespace heddle::fw_detail {

template <module_kind Kind, module_role Role, bool External>
class kind_root : public module_base {
 protected:
  kind_root() noexcept : module_base(Kind, Role, External) {}
};

// Without ExternalWork the processors never call call_acquire: nothing to wait for, and nothing
// for a module to override.
template <module_kind Kind, module_role Role>
class kind_root<Kind, Role, false> : public module_base {
 protected:
  kind_root() noexcept : module_base(Kind, Role, false) {}

 private:
  void call_acquire(const event&, const event_setup&, async_handle handle) final { handle.done(); }
};

// one:: kinds: shared resources (one.hpp).
template <class Base>
class shared_resources : public Base {
 protected:
  // Runs one at a time with every module that declares `name` (in the constructor only: the
  // constructing thread's call, std::logic_error once the module is in a process).
  void uses_resource(std::string name) { this->declare_resource(std::move(name)); }
  // The legacy resource: one at a time with every thread-unsafe module (as above).
  void uses_resource() { this->declare_resource(legacy_resource); }
};

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class A>
concept is_ability = requires { ability<A>::allowed(module_kind::global); };
// clang-format on

template <class A, module_kind Kind>
constexpr bool allowed_in() noexcept {
  if constexpr (is_ability<A>) return ability<A>::allowed(Kind);
  else return true;  // refused as no ability
}

template <class A, class... List>
inline constexpr int count_in = (int(std::is_same_v<A, List>) + ... + 0);

// Base with A's layer on top; Base alone for a type that is no ability (kind_base_of refuses it,
// and refuses it alone).
template <class A, module_kind Kind, class Base>
struct with_layer {
  using type = Base;
};
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class A, module_kind Kind, class Base>
  requires is_ability<A>
struct with_layer<A, Kind, Base> {
  using type = typename ability<A>::template layer<Base, Kind>;
};
// clang-format on

template <module_kind Kind, class Base, class... Abilities>
struct stack_layers {
  using type = Base;
};
template <module_kind Kind, class Base, class A, class... Rest>
struct stack_layers<Kind, Base, A, Rest...> : stack_layers<Kind, typename with_layer<A, Kind, Base>::type, Rest...> {};

template <module_kind Kind, module_role Role, class... Abilities>
struct kind_base_of {
  static_assert((is_ability<Abilities> && ...),
                "heddle::fw: a module kind's template arguments are abilities (abilities.hpp: ExternalWork)");
  static_assert((allowed_in<Abilities, Kind>() && ...), "heddle::fw: an ability that this module kind does not take");
  static_assert(((count_in<Abilities, Abilities...> == 1) && ...), "heddle::fw: an ability listed twice");

  using root = kind_root<Kind, Role, external_work<Abilities...>>;
  using type = typename stack_layers<Kind, std::conditional_t<Kind == module_kind::one, shared_resources<root>, root>,
                                     Abilities...>::type;
};

template <module_kind Kind, module_role Role, class... Abilities>
using kind_base = typename kind_base_of<Kind, Role, Abilities...>::type;

}  // namespace heddle::fw_detail
