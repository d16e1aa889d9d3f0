// SPDX-License-Identifier: Apache-2.0
// The successor records that then_state (continuation_state.hpp) does not cover:
//  - a continuation that returns a future<U> (then unwraps it): the record runs the continuation
//    as a task, then attaches itself to the inner future and completes when that one does, on the
//    inner future's completing thread; no thread waits for the inner future;
//  - the successors of a shared_future, several per source, each a listener of the shared state
//    (shared_state.hpp), that receive the value as a const reference.
// `Source` says where the input comes from and who owns it:
//   bool attach(listener*)        runs the listener on completion; false if already complete
//   const exception_ptr* error()  the source's exception, or null
//   invoke(F&&)                   calls the continuation with the value (or nothing for void)
//   void drop()                   gives the source up (after the continuation ran, or was skipped)
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/continuation_state.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/errors.hpp"

// Included by future.hpp before it defines future: the unwrapping record names it only in templates.
namespace heddle {
template <class T>
class [[nodiscard]] future;
}  // namespace heddle

namespace heddle::core_detail {

template <class T>
class future_base;

// A continuation that can wait in a list with others (a shared_future's successors and waiters).
struct listener : continuation {
  explicit listener(void (*r)(continuation*) noexcept) noexcept : continuation{r} {}
  listener* next = nullptr;
};

// A future's state, owned by the successor: the future was consumed by then.
template <class T>
struct owned_source {
  future_state<T>* s;

  bool attach(listener* l) noexcept { return s->attach(l); }
  const std::exception_ptr* error() const noexcept { return s->error(); }
  template <class F>
  decltype(auto) invoke(F&& f) {
    if constexpr (std::is_void_v<T>) return std::invoke(std::forward<F>(f));
    else return std::invoke(std::forward<F>(f), std::move(s->value_ref()));
  }
  void drop() noexcept { s->fvt()->destroy(s); }
};

template <class U, class Source, class F, bool Unwrap>
class chain_state final : public future_state<U>, public listener {
 public:
  template <class G>
  chain_state(Source src, G&& g, runtime_core* home, strategy how, bool timed)
      : future_state<U>(&vtable), listener(&on_source_ready), src_(src), start_{home, how, timed} {
    ::new (static_cast<void*>(std::addressof(fn_))) F(std::forward<G>(g));
  }
  ~chain_state() {}

  // Called once, right after construction: runs when the source is (or already was) ready.
  void start() {
    if (!src_.attach(this)) start_.release(this);
  }

 private:
  static void on_source_ready(continuation* c) noexcept {
    auto* s = static_cast<chain_state*>(c);
    s->start_.release(s);
  }

  // Runs the continuation (or passes the source's exception on) and gives the source up.
  // Unwrapping: returns the inner future's state to wait for, or null once the result is stored.
  future_state<U>* body() noexcept {
    start_.record_latency();
    future_state<U>* inner = nullptr;
    if (const std::exception_ptr* e = src_.error()) {
      this->set_error(*e);
    } else {
      try {
        if constexpr (Unwrap) {
          future<U> f = src_.invoke(std::move(fn_));
          inner = std::exchange(static_cast<future_base<U>&>(f).s_, nullptr);
          if (!inner) throw invalid_future("heddle::future::then: the continuation returned a future without state");
        } else {
          this->set_value_from([this]() -> decltype(auto) { return src_.invoke(std::move(fn_)); });
        }
      } catch (...) {
        this->set_error(std::current_exception());
      }
    }
    fn_.~F();
    src_.drop();
    return inner;
  }

  static void run(task_base* t) noexcept { static_cast<chain_state*>(t)->body(); }
  static void execute(task_base* t) noexcept {
    auto* s = static_cast<chain_state*>(t);
    future_state<U>* inner = s->body();
    if constexpr (Unwrap) {
      if (inner) {
        // The listener node is free again (the source fired it): it now waits on the inner future.
        s->inner_ = inner;
        s->ready = &on_inner_ready;
        if (!inner->attach(s)) on_inner_ready(s);
        return;
      }
    }
    s->complete();
  }
  static void on_inner_ready(continuation* c) noexcept {
    auto* s = static_cast<chain_state*>(c);
    future_state<U>* in = s->inner_;
    if (const std::exception_ptr* e = in->error()) {
      s->set_error(*e);
    } else {
      try {
        if constexpr (std::is_void_v<U>) s->set_value();
        else s->set_value(std::move(in->value_ref()));
      } catch (...) {
        s->set_error(std::current_exception());
      }
    }
    in->fvt()->destroy(in);
    s->complete();
  }
  static void discard(task_base* t) noexcept {
    auto* s = static_cast<chain_state*>(t);
    s->fn_.~F();
    s->src_.drop();
    s->set_error(shutdown_error());
    s->complete();
  }
  static void destroy(future_state_base* b) noexcept { free_record(static_cast<chain_state*>(b)); }

  // An unwrapping record completes after its task ran (when the inner future does), so it has no
  // `run`: a waiter that pops it runs it through `execute`, like a record that is no task's.
  static constexpr future_vtable vtable{{&execute, &discard}, Unwrap ? nullptr : &run, &destroy};

  Source src_;
  successor_start start_;
  union {
    F fn_;
  };
  future_state<U>* inner_ = nullptr;  // unwrapping: the continuation's future, once it ran
};

}  // namespace heddle::core_detail
