// SPDX-License-Identifier: Apache-2.0
// The records behind when_all and when_all_ready: one continuation slot per input, a countdown,
// and the gathered values (when_all) or the input futures (when_all_ready). It is never queued:
// the completion of its last input finishes it inline.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/future_state.hpp"

namespace heddle::core_detail {

// when_all hands back values; a future<void> contributes an empty placeholder.
template <class T>
using slot_value_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class T>
slot_value_t<T> take_value(future_state<T>* in) {
  if constexpr (std::is_void_v<T>) return std::monostate{};
  else return std::move(in->value_ref());
}

// The countdown and completion shared by the fixed and the dynamic form.
template <class Derived, class Result>
class gather_state : public future_state<Result> {
 protected:
  struct slot : continuation {
    gather_state* parent;
  };

  gather_state() : future_state<Result>(&vtable) {}

  void init_slot(slot& s) noexcept {
    s.ready = &on_input_ready;
    s.parent = this;
  }
  // Called with the number of inputs once they are stored: arms a slot on each.
  template <class Arm>
  void start(std::size_t n, Arm&& arm_all) noexcept {
    remaining_.store(n + 1, std::memory_order_relaxed);  // +1: no finish before every slot is armed
    arm_all();
    arrive();
  }
  void arm(future_state_base* in, slot& s) noexcept {
    if (!in->attach(&s)) arrive();
  }

 private:
  static void on_input_ready(continuation* c) noexcept { static_cast<slot*>(c)->parent->arrive(); }
  void arrive() noexcept {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      auto* self = static_cast<Derived*>(this);
      if (const std::exception_ptr* e = self->first_error()) {
        this->set_error(*e);
      } else {
        try {
          self->gather();
        } catch (...) {
          this->set_error(std::current_exception());
        }
      }
      self->drop_inputs();
      this->complete();
    }
  }
  static void destroy(future_state_base* b) noexcept { free_record(static_cast<Derived*>(b)); }
  static constexpr future_vtable vtable{{nullptr, nullptr}, nullptr, &destroy};

  std::atomic<std::size_t> remaining_{0};
};

template <class... T>
class when_all_state final : public gather_state<when_all_state<T...>, std::tuple<slot_value_t<T>...>> {
  using base = gather_state<when_all_state<T...>, std::tuple<slot_value_t<T>...>>;
  friend base;

 public:
  template <class... F>
  explicit when_all_state(F&... futures) noexcept : inputs_(access::state_of(std::move(futures))...) {
    for (auto& s : slots_) this->init_slot(s);
    this->start(sizeof...(T), [this] {
      [this]<std::size_t... I>(std::index_sequence<I...>) { (this->arm(std::get<I>(inputs_), slots_[I]), ...); }
      (std::index_sequence_for<T...>{});
    });
  }

 private:
  const std::exception_ptr* first_error() const noexcept {
    const std::exception_ptr* e = nullptr;
    std::apply([&](auto*... in) { ((e = e ? e : in->error()), ...); }, inputs_);
    return e;
  }
  void gather() {
    std::apply([this](auto*... in) { this->set_value(take_value(in)...); }, inputs_);
  }
  void drop_inputs() noexcept {
    std::apply([](auto*... in) { (in->fvt()->destroy(in), ...); }, inputs_);
  }

  std::tuple<future_state<T>*...> inputs_;
  std::array<typename base::slot, sizeof...(T)> slots_;
};

template <class T>
class when_all_range_state final : public gather_state<when_all_range_state<T>, std::vector<slot_value_t<T>>> {
  using base = gather_state<when_all_range_state<T>, std::vector<slot_value_t<T>>>;
  friend base;

 public:
  template <class Futures>
  explicit when_all_range_state(Futures& futures) : slots_(new typename base::slot[futures.size()]) {
    inputs_.reserve(futures.size());
    for (auto& f : futures) inputs_.push_back(access::state_of(std::move(f)));
    for (std::size_t i = 0; i < inputs_.size(); ++i) this->init_slot(slots_[i]);
    this->start(inputs_.size(), [this] {
      for (std::size_t i = 0; i < inputs_.size(); ++i) this->arm(inputs_[i], slots_[i]);
    });
  }

 private:
  const std::exception_ptr* first_error() const noexcept {
    for (auto* in : inputs_)
      if (auto* e = in->error()) return e;
    return nullptr;
  }
  void gather() {
    std::vector<slot_value_t<T>> out;
    out.reserve(inputs_.size());
    for (auto* in : inputs_) out.push_back(take_value(in));
    this->set_value(std::move(out));
  }
  void drop_inputs() noexcept {
    for (auto* in : inputs_) in->fvt()->destroy(in);
    inputs_.clear();
  }

  std::vector<future_state<T>*> inputs_;
  std::unique_ptr<typename base::slot[]> slots_;
};

// when_all_ready: the inputs stay in their futures, which own their states while the slots wait
// on them, and are handed back as they are, each with its own value or exception. Never fails.
template <class T>
class when_all_ready_state final : public gather_state<when_all_ready_state<T>, std::vector<future<T>>> {
  using base = gather_state<when_all_ready_state<T>, std::vector<future<T>>>;
  friend base;

 public:
  explicit when_all_ready_state(std::vector<future<T>>& futures)
      : futures_(std::move(futures)), slots_(new typename base::slot[futures_.size()]) {
    for (std::size_t i = 0; i < futures_.size(); ++i) this->init_slot(slots_[i]);
    this->start(futures_.size(), [this] {
      for (std::size_t i = 0; i < futures_.size(); ++i) this->arm(access::peek(futures_[i]), slots_[i]);
    });
  }

 private:
  const std::exception_ptr* first_error() const noexcept { return nullptr; }
  void gather() noexcept { this->set_value(std::move(futures_)); }
  void drop_inputs() noexcept {}  // handed on with the result

  std::vector<future<T>> futures_;
  std::unique_ptr<typename base::slot[]> slots_;
};

}  // namespace heddle::core_detail
