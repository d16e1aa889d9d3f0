// SPDX-License-Identifier: Apache-2.0
// The engine of heddle::parallel_pipeline. Each of max_tokens tokens carries one item through the
// filters; a token is itself a task record (scheduled again each time it moves on, so an item costs
// no allocation) and owns two value slots (a filter reads one and constructs its result in the
// other). A serial filter is a gate: the token that finds it free runs the body; others park there
// (in input order for serial_in_order, a FIFO for serial_out_of_order) and whoever leaves the gate
// hands it to the next one by scheduling that token: oneTBB's input buffer, under a spin lock held
// for a few loads and stores. A body that returns a pending future parks its token on the future
// (a continuation, no thread); the completion schedules the token again. Tokens that finish go back
// to the input, which runs one call at a time. After an exception or a cancellation, the items in
// flight go on through the gates without running bodies, so that no in-order gate waits forever for
// an item that was dropped, and the call returns once every token is back.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "heddle/algorithm/detail/pipeline_stage.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle::core_detail {

using stage_list = std::vector<std::shared_ptr<const stage_node>>;

struct pipeline_token : task_base {
  struct wake_node : continuation {
    pipeline_token* token;
  };

  pipeline_token() noexcept : task_base(nullptr) {}  // pipeline_run sets its table

  class pipeline_run* run = nullptr;
  pipeline_token* link = nullptr;        // in a free list or a serial_out_of_order gate's queue
  std::uint64_t seq = 0;                 // the item's place in input order
  std::size_t stage = 0;                 // the filter it enters next (0: the input)
  future_state_base* pending = nullptr;  // the previous filter's future, when it was not ready
  std::byte* slots = nullptr;            // two slots of slot_size bytes
  bool holds_value = false;              // a value is constructed in the slot `stage` reads
  bool skip = false;                     // the pipeline stopped: no more bodies for this item
  bool holds_turn = false;               // a gate handed it the turn of filter `stage`
  wake_node wake;
};

// What the pipeline's caller waits on: a future state that no task computes (forcing it helps,
// then sleeps), opened by the token that finds the pipeline done.
class pipeline_latch final : public future_state<void> {
 public:
  pipeline_latch() noexcept : future_state<void>(&vtable) {}
  void open() noexcept {
    set_value();
    complete();
  }

 private:
  static void never_run(task_base*) noexcept {
    fatal_internal("a pipeline's latch was run as a task", "heddle::parallel_pipeline");
  }
  static void never_destroyed(future_state_base*) noexcept {
    fatal_internal("a pipeline's latch, which lives on the caller's stack, was freed", "heddle::parallel_pipeline");
  }
  static constexpr future_vtable vtable{{&never_run, &never_run}, nullptr, &never_destroyed};
};

// A serial filter's gate, on a cache line of its own: the gates of neighbouring filters are taken
// by different workers at once.
struct alignas(64) serial_gate {
  spin_lock lock;
  bool busy = false;
  bool in_order = false;
  std::uint64_t next = 0;                // in order: the item whose turn comes next
  std::vector<pipeline_token*> waiting;  // in order: parked items by seq % max_tokens
  pipeline_token* head = nullptr;        // out of order: parked items, first come first served
  pipeline_token* tail = nullptr;
};

class pipeline_run {
 public:
  pipeline_run(task_group& g, const stage_list& stages, std::size_t max_tokens)
      : g_(g),
        stages_(stages),
        n_(stages.size()),
        max_tokens_(max_tokens),
        core_(current_worker->core),
        gates_(stages.size()),
        tokens_(std::make_unique<pipeline_token[]>(max_tokens)) {
    std::size_t align = alignof(std::max_align_t), size = 1;
    for (const auto& s : stages_) {
      align = std::max(align, s->out_align);
      size = std::max(size, s->out_size);
    }
    slot_size_ = (size + align - 1) / align * align;
    slot_align_ = align;
    for (std::size_t i = 1; i < n_; ++i) {
      gates_[i].in_order = stages_[i]->mode == filter_mode::serial_in_order;
      if (gates_[i].in_order) gates_[i].waiting.assign(max_tokens_, nullptr);
    }
    // Last: nothing after it throws, so the destructor frees it.
    storage_ = static_cast<std::byte*>(::operator new(2 * slot_size_ * max_tokens_, std::align_val_t(slot_align_)));
    for (std::size_t i = 0; i < max_tokens_; ++i) {
      pipeline_token& k = tokens_[i];
      k.vt = &token_vtable;
      k.run = this;
      k.slots = storage_ + 2 * slot_size_ * i;
      k.wake.ready = &on_future_ready;
      k.wake.token = &k;
      if (i > 0) {
        k.link = free_;
        free_ = &k;
      }
    }
  }
  ~pipeline_run() { ::operator delete(storage_, std::align_val_t(slot_align_)); }
  pipeline_run(const pipeline_run&) = delete;
  pipeline_run& operator=(const pipeline_run&) = delete;

  // Starts the input with the first token, waits (helping) until every token is back, and
  // rethrows the first exception.
  void run_to_end() {
    input_busy_ = true;
    advance(&tokens_[0]);
    force(&latch_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static void execute(task_base* t) noexcept {
    auto* k = static_cast<pipeline_token*>(t);
    k->run->advance(k);
  }
  // The runtime is stopping and will not run the token: the pipeline fails, and the token goes on
  // through the gates here, running no body.
  static void discard(task_base* t) noexcept {
    auto* k = static_cast<pipeline_token*>(t);
    k->run->fail(shutdown_error());
    k->run->advance(k);
  }
  // A future a token waited on is ready: the token runs again, on this worker's deque when the
  // completing thread is one of the runtime's workers, else on the express lane (as a `then`
  // successor of an operation starts by default).
  static void on_future_ready(continuation* c) noexcept {
    pipeline_token* k = static_cast<pipeline_token::wake_node*>(c)->token;
    k->run->reschedule(k);
  }
  static constexpr task_vtable token_vtable{&execute, &discard};

  void reschedule(pipeline_token* k) noexcept {
    k->thief.store(nullptr, std::memory_order_relaxed);
    worker* w = current_worker;
    if (w && w->core == core_) spawn_local(w, k);
    else submit_express(core_, k);
  }

  bool stopping() const noexcept { return failed_.load(std::memory_order_acquire) || g_.is_cancelling(); }
  void fail(std::exception_ptr e) noexcept {
    if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
  }

  void* slot(pipeline_token* k, std::size_t i) const noexcept { return k->slots + (i % 2) * slot_size_; }

  // Moves token k on until it parks (at a gate or on a future), or the input has nothing for it.
  void advance(pipeline_token* k) noexcept {
    for (;;) {
      if (k->pending) {  // the future of filter stage - 1 is ready
        future_state_base* s = std::exchange(k->pending, nullptr);
        try {
          stages_[k->stage - 1]->take(s, slot(k, k->stage));
          k->holds_value = stages_[k->stage - 1]->has_output;
        } catch (...) {
          fail(std::current_exception());
          k->skip = true;
        }
      }
      if (k->stage == 0) {
        if (!run_input(k)) return;
        if (k->pending && k->pending->attach(&k->wake)) return;
        continue;
      }
      if (k->stage == n_) {
        if (!retire(k)) return;
        continue;
      }
      const std::size_t i = k->stage;
      const stage_node& st = *stages_[i];
      const bool serial = st.mode != filter_mode::parallel;
      if (serial && !std::exchange(k->holds_turn, false) && !enter(i, k)) return;
      if (k->skip || stopping()) {
        k->skip = true;
        if (k->holds_value) stages_[i - 1]->destroy_output(slot(k, i));
        k->holds_value = false;
      } else {
        try {
          k->holds_value = false;  // call() consumes the input, even when the body throws
          k->pending = st.call(slot(k, i), slot(k, i + 1), nullptr);
          k->holds_value = !k->pending && st.has_output;
        } catch (...) {
          fail(std::current_exception());
          k->skip = true;
        }
      }
      k->stage = i + 1;
      if (serial) leave(i);
      if (k->pending && k->pending->attach(&k->wake)) return;
    }
  }

  // Token k holds the input's turn: it calls the first filter's body (unless the pipeline is
  // stopping), then hands the turn to a free token or gives it up. False when k went back to the
  // free list (no item).
  bool run_input(pipeline_token* k) noexcept {
    const stage_node& st = *stages_[0];
    bool produced = false;
    if (!stopping()) {
      flow_control fc;
      try {
        future_state_base* p = st.call(nullptr, slot(k, 1), &fc);
        if (fc.stopped_) {
          if (p) stage_node::drop(p);
          else st.destroy_output(slot(k, 1));
        } else {
          produced = true;
          k->pending = p;
          k->holds_value = !p && st.has_output;
        }
      } catch (...) {
        fail(std::current_exception());
      }
    }
    pipeline_token* next = nullptr;
    bool done = false;
    input_lock_.lock();
    if (produced) {
      k->seq = next_seq_++;
      k->stage = 1;
      k->skip = false;
      ++live_;
    } else {
      stopped_ = true;
      k->link = free_;
      free_ = k;
    }
    if (stopped_ || !free_ || stopping()) {
      input_busy_ = false;
      if (stopping()) stopped_ = true;
      done = stopped_ && live_ == 0;
    } else {
      next = free_;
      free_ = next->link;
    }
    input_lock_.unlock();
    if (next) reschedule(next);  // its stage is 0: it runs the input next
    if (done) latch_.open();
    return produced;
  }

  // Token k passed the last filter: it goes back to the free list, or straight to the input when
  // the input is idle. False when it has nothing more to do.
  bool retire(pipeline_token* k) noexcept {
    bool done = false, again = false;
    k->stage = 0;
    input_lock_.lock();
    --live_;
    if (!input_busy_ && !stopped_) {
      if (stopping()) stopped_ = true;
      else again = input_busy_ = true;
    }
    if (!again) {
      k->link = free_;
      free_ = k;
      done = stopped_ && !input_busy_ && live_ == 0;
    }
    input_lock_.unlock();
    if (done) latch_.open();
    return again;
  }

  // Whether token k may run serial filter i now; else it is parked at the gate.
  bool enter(std::size_t i, pipeline_token* k) noexcept {
    serial_gate& gate = gates_[i];
    std::lock_guard lock(gate.lock);
    if (gate.in_order) {
      if (!gate.busy && k->seq == gate.next) return gate.busy = true;
      gate.waiting[k->seq % max_tokens_] = k;
    } else {
      if (!gate.busy) return gate.busy = true;
      k->link = nullptr;
      (gate.tail ? gate.tail->link : gate.head) = k;
      gate.tail = k;
    }
    return false;
  }

  // The token running serial filter i is done with it: the turn goes to the next parked token,
  // which is scheduled to run it.
  void leave(std::size_t i) noexcept {
    serial_gate& gate = gates_[i];
    pipeline_token* next;
    {
      std::lock_guard lock(gate.lock);
      if (gate.in_order) {
        pipeline_token*& w = gate.waiting[++gate.next % max_tokens_];
        next = std::exchange(w, nullptr);
      } else {
        next = gate.head;
        if (next && !(gate.head = next->link)) gate.tail = nullptr;
      }
      if (!next) gate.busy = false;
    }
    if (next) {
      next->holds_turn = true;
      reschedule(next);
    }
  }

  task_group& g_;
  const stage_list& stages_;
  const std::size_t n_, max_tokens_;
  runtime_core* const core_;
  std::vector<serial_gate> gates_;  // for filters 1..n-1 (the input has its own)
  std::unique_ptr<pipeline_token[]> tokens_;
  std::byte* storage_ = nullptr;
  std::size_t slot_size_ = 0, slot_align_ = 0;

  alignas(64) spin_lock input_lock_;  // the input's turn, the free tokens, the count of items in flight
  bool input_busy_ = false;
  bool stopped_ = false;  // the input gave no item (flow_control::stop, an exception) or stopping()
  pipeline_token* free_ = nullptr;
  std::size_t live_ = 0;
  std::uint64_t next_seq_ = 0;

  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  pipeline_latch latch_;
};

}  // namespace heddle::core_detail
