// SPDX-License-Identifier: Apache-2.0
// One filter of heddle::parallel_pipeline with its types erased: it calls the body on a value in a
// token's slot and constructs the result in the other slot, or hands back the state of the future
// the body returned, to be waited for without a thread.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "heddle/algorithm/detail/call.hpp"
#include "heddle/algorithm/flow_control.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/future.hpp"

namespace heddle {

namespace core_detail {

template <class T>
struct is_heddle_future : std::false_type {};
template <class T>
struct is_heddle_future<future<T>> : std::true_type {};

class stage_node {
 public:
  stage_node(filter_mode m, std::size_t size, std::size_t align, bool has_out) noexcept
      : mode(m), out_size(size), out_align(align), has_output(has_out) {}
  virtual ~stage_node() = default;

  // Calls the body: with the value at `in` (moved from, then destroyed, also when the body throws),
  // with nothing when the input type is void, or with `fc` (the first filter). Constructs the
  // result at `out` and returns null, or, when the body returned a future that is not ready yet,
  // returns its state (a reference the caller now holds). Throws what the body throws.
  virtual future_state_base* call(void* in, void* out, flow_control* fc) const = 0;
  // Moves a ready future's value to `out` and releases the state; rethrows the future's exception.
  virtual void take(future_state_base* s, void* out) const = 0;
  // Drops a future's state without its value (the first filter's result after flow_control::stop).
  static void drop(future_state_base* s) noexcept { s->release(); }
  virtual void destroy_output(void* out) const noexcept = 0;

  const filter_mode mode;
  const std::size_t out_size, out_align;
  const bool has_output;  // Out is not void: a value lives in the slot between two filters
};

template <class In, class Out, class Body>
class typed_stage final : public stage_node {
  // std::conjunction: a generic body ([](auto& x) {...}) of a later filter is never tried on a
  // flow_control& (its return type's deduction would fail hard, not as a substitution failure).
  static constexpr bool first = std::conjunction_v<std::is_void<In>, std::is_invocable<const Body&, flow_control&>>;
  static auto invoke(const Body& b, void* in, flow_control* fc) {
    if constexpr (first) return std::invoke(b, *fc);
    else if constexpr (std::is_void_v<In>) return std::invoke(b);
    else return call_moving_or_lvalues(b, std::move(*std::launder(static_cast<In*>(in))));
  }
  using result = decltype(invoke(std::declval<const Body&>(), nullptr, nullptr));
  static constexpr bool async = is_heddle_future<result>::value && !is_heddle_future<Out>::value;
  static_assert(async ? std::is_same_v<result, future<Out>>
                      : (std::is_void_v<Out> ? std::is_void_v<result> : std::is_convertible_v<result, Out>),
                "heddle::make_filter<In, Out>: the body must return Out or heddle::future<Out>");
  using stored = std::conditional_t<std::is_void_v<Out>, char, Out>;

 public:
  template <class B>
  typed_stage(filter_mode m, B&& body)
      : stage_node(m, std::is_void_v<Out> ? 0 : sizeof(stored), alignof(stored), !std::is_void_v<Out>),
        body_(std::forward<B>(body)) {}

  future_state_base* call(void* in, void* out, flow_control* fc) const override {
    struct destroy_input {
      void* p;
      ~destroy_input() {
        if constexpr (!std::is_void_v<In>) std::launder(static_cast<In*>(p))->~In();
      }
    } guard{in};
    if constexpr (async) {
      future_state<Out>* s = access::state_of(invoke(body_, in, fc));
      if (!s) throw invalid_future("heddle::parallel_pipeline: a filter's body returned a future without state");
      if (!s->is_done()) return s;
      take(s, out);
    } else if constexpr (std::is_void_v<Out>) {
      invoke(body_, in, fc);
    } else {
      ::new (out) Out(invoke(body_, in, fc));
    }
    return nullptr;
  }

  void take(future_state_base* b, void* out) const override {
    if constexpr (async) {
      auto* s = static_cast<future_state<Out>*>(b);
      struct release_state {
        future_state<Out>* s;
        ~release_state() { s->release(); }
      } guard{s};
      if constexpr (std::is_void_v<Out>) s->value_ref();
      else ::new (out) Out(std::move(s->value_ref()));
    } else {
      (void)b;
      (void)out;
      fatal_internal("a stage's output read while its future is pending", "heddle::parallel_pipeline");
    }
  }

  void destroy_output(void* out) const noexcept override {
    if constexpr (!std::is_void_v<Out>) std::launder(static_cast<Out*>(out))->~Out();
    else (void)out;
  }

 private:
  Body body_;
};

}  // namespace core_detail
}  // namespace heddle
