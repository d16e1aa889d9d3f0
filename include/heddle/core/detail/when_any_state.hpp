// SPDX-License-Identifier: Apache-2.0
// The record behind when_any: it keeps the input futures, attaches a slot to each, and completes
// when the first slot fires, handing every future back with the winner's index.
//
// Lifetime. The winner detaches the other slots (a compare-and-swap of each input's state word from
// the slot back to pending) before it hands the futures back, so that the user may wait on them or
// chain on them. A slot whose input completes meanwhile cannot be detached: its call may still be
// on its way, and touches the record after the user has the futures, maybe after the when_any future
// was dropped. So the record counts references: one per slot (dropped when it fires, is detached or
// was never armed) and one for the future's own life (dropped by destroy()); the last frees it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/future_state.hpp"

namespace heddle::core_detail {

template <class T, class Result>
class when_any_state final : public future_state<Result> {
 public:
  explicit when_any_state(std::vector<future<T>>& futures)
      : future_state<Result>(&vtable), futures_(std::move(futures)), slots_(new slot[futures_.size()]) {
    refs_.store(futures_.size() + 1, std::memory_order_relaxed);
  }
  ~when_any_state() = default;

  // Called once, right after construction (a slot may fire as soon as it is armed). Arms the
  // slots in order and stops at the first input that is already ready: that one wins unless an
  // armed one fired first.
  void start() noexcept {
    const std::size_t n = futures_.size();
    std::size_t armed = 0;
    for (; armed < n; ++armed) {
      slot& s = slots_[armed];
      s.ready = &on_ready;
      s.parent = this;
      s.index = armed;
      if (!access::peek(futures_[armed])->attach(&s)) {
        try_win(armed);
        break;
      }
    }
    armed_ = armed;
    for (std::size_t i = armed; i < n; ++i) leave();  // the slots never armed
    pass_gate();
  }

 private:
  struct slot : continuation {
    when_any_state* parent;
    std::size_t index;
  };

  static void on_ready(continuation* c) noexcept {
    auto* s = static_cast<slot*>(c);
    when_any_state* self = s->parent;
    self->try_win(s->index);
    self->leave();
  }

  void try_win(std::size_t i) noexcept {
    if (!won_.exchange(true, std::memory_order_acq_rel)) {
      winner_ = i;
      pass_gate();
    }
  }
  // The winner and the arming loop each pass once; the second finishes (no slot is detached
  // while the loop may still arm one).
  void pass_gate() noexcept {
    if (gate_.fetch_sub(1, std::memory_order_acq_rel) == 1) finish();
  }
  void finish() noexcept {
    for (std::size_t i = 0; i < armed_; ++i) {
      auto expected = reinterpret_cast<std::uintptr_t>(&slots_[i]);
      if (access::peek(futures_[i])
              ->state.compare_exchange_strong(expected, future_state_base::pending, std::memory_order_acq_rel,
                                              std::memory_order_acquire))
        leave();  // detached: it will never fire
      // Otherwise that input completed: its slot's call drops the slot's reference.
    }
    this->set_value(Result{winner_, std::move(futures_)});
    this->complete();
  }
  void leave() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) free_record(this);
  }

  static void destroy(future_state_base* b) noexcept { static_cast<when_any_state*>(b)->leave(); }
  static constexpr future_vtable vtable{{nullptr, nullptr}, nullptr, &destroy};

  std::vector<future<T>> futures_;
  std::unique_ptr<slot[]> slots_;
  std::size_t armed_ = 0;
  std::size_t winner_ = 0;
  std::atomic<std::size_t> refs_{0};
  std::atomic<int> gate_{2};
  std::atomic<bool> won_{false};
};

}  // namespace heddle::core_detail
