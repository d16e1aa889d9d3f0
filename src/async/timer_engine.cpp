// SPDX-License-Identifier: Apache-2.0
#include "timer_engine.hpp"

#include <sys/prctl.h>

#include <memory>

#include "heddle/async/timer.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/clock.hpp"

namespace heddle::async_detail {

// What a cancellable timer adds, kept apart so that the common timer without a token fits a
// 128-byte record (a pending timer then costs 128 bytes plus its successor and heap slot).
struct timer_engine::timer_cancel_link {
  op_cancel_hook<timer_engine::timer_op> hook;
  core_detail::cancel_state* token = nullptr;  // where `hook` is registered
  cancellation_token token_owner;              // keeps `token` alive if every source and token is dropped
};

struct timer_engine::timer_op final : op_state<void> {
  timer_op(timer_engine* e, std::int64_t deadline, std::uint64_t seq) noexcept
      : op_state<void>(&op_vtable<timer_op>::table, "timer"), engine(e), deadline_ns(deadline), seq(seq) {}
  ~timer_op() { delete cancel; }
  timer_engine* engine;
  std::int64_t deadline_ns;
  std::uint64_t seq;  // start order, for timers with equal deadlines
  std::size_t heap_index = unqueued;
  timer_cancel_link* cancel = nullptr;  // only for a timer started with a cancellable token
};

timer_engine::timer_engine(core_detail::runtime_core* core)
    : service_thread("heddle-timer", "timer engine"), core_(core) {
  start_threads();
}

timer_engine::~timer_engine() { stop(); }

core_detail::future_state<void>* timer_engine::start(std::chrono::steady_clock::time_point deadline,
                                                     const cancellation_token& token) {
  std::unique_ptr<timer_cancel_link> link;
  if (core_detail::access::state_of(token)) {
    link = std::make_unique<timer_cancel_link>();
    link->hook.fire = &on_cancel;
  }
  static_assert(sizeof(timer_op) <= 128, "a timer without a token fits a 128-byte record");
  auto* op = core_detail::make_record<timer_op>(this, core_detail::steady_ns(deadline), 0);
  if (link) {
    link->hook.op = op;
    op->cancel = link.release();
  }
  bool earliest = false;
  std::exception_ptr error;
  {
    std::lock_guard lock(m_);
    if (stopping_) {
      error = stopped_error();
    } else {
      op->seq = next_seq_++;
      heap_push(op);
      earliest = heap_.front() == op;
      // Registered under the engine's lock, so that a cancellation racing with the start finds
      // the timer in the heap. (A hook fires outside the token's lock, so the order is safe.)
      if (core_detail::cancel_state* c = core_detail::access::state_of(token)) {
        if (c->add(&op->cancel->hook)) {
          op->cancel->token = c;
          op->cancel->token_owner = token;
        } else {
          heap_erase(op);
          earliest = false;
          error = cancelled_error();
        }
      }
    }
  }
  if (error) op->fail(std::move(error));
  else if (earliest) wake_.notify_one();
  return op;
}

void timer_engine::on_cancel(core_detail::cancel_hook* h) noexcept {
  timer_op* op = static_cast<op_cancel_hook<timer_op>*>(h)->op;
  timer_engine* e = op->engine;
  bool won;
  {
    std::lock_guard lock(e->m_);
    won = op->heap_index != unqueued;
    if (won) {
      e->heap_erase(op);
      e->cancelling_.enter();
    }
  }
  h->finish_firing();
  // Lost: the service thread took it and completes it once this hook has finished firing.
  if (won) {
    op->fail(cancelled_error());
    e->cancelling_.leave();
  }
}

void timer_engine::finish(timer_op* op, std::exception_ptr error) noexcept {
  if (op->cancel && op->cancel->token) op->cancel->token->remove(&op->cancel->hook);
  if (error) op->fail(std::move(error));
  else op->succeed();
}

namespace {
constexpr std::size_t max_batch = 64;
}  // namespace

void timer_engine::run() {
  // The kernel may otherwise let a timed sleep overrun by 50 µs (the default timer slack).
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  std::vector<timer_op*> due;
  std::unique_lock lock(m_);
  while (!stopping_) {
    if (heap_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const std::int64_t now = core_detail::steady_now_ns();
    if (heap_.front()->deadline_ns > now) {
      wake_.wait_until(lock,
                       std::chrono::steady_clock::time_point(std::chrono::nanoseconds(heap_.front()->deadline_ns)));
      continue;
    }
    // What is due, in (deadline, start) order, completed outside the lock: a completion may run a
    // short_task successor that starts new timers. In batches: with 100,000 timers due at once,
    // taking them all first held the lock (and any worker starting a timer) for 30 ms and delayed
    // the first successor as long.
    while (!heap_.empty() && heap_.front()->deadline_ns <= now && due.size() < max_batch) due.push_back(heap_pop());
    lock.unlock();
    const std::int64_t completed = core_detail::steady_now_ns();
    for (timer_op* op : due) {
      core_detail::record_timer_lateness(core_, op->deadline_ns, completed);
      finish(op, nullptr);
    }
    due.clear();
    lock.lock();
  }
}

void timer_engine::request_stop() noexcept {
  {
    std::lock_guard lock(m_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void timer_engine::fail_pending() noexcept {
  std::vector<timer_op*> pending;
  {
    std::lock_guard lock(m_);
    while (!heap_.empty()) pending.push_back(heap_pop());
  }
  for (timer_op* op : pending) finish(op, stopped_error());
  cancelling_.wait_none();
}

bool timer_engine::earlier(const timer_op* a, const timer_op* b) noexcept {
  return a->deadline_ns < b->deadline_ns || (a->deadline_ns == b->deadline_ns && a->seq < b->seq);
}

void timer_engine::place(std::size_t i, timer_op* op) noexcept {
  heap_[i] = op;
  op->heap_index = i;
}

void timer_engine::sift_up(std::size_t i) {
  timer_op* op = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(op, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, op);
}

void timer_engine::sift_down(std::size_t i) {
  timer_op* op = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], op)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, op);
}

void timer_engine::heap_push(timer_op* op) {
  heap_.push_back(op);
  sift_up(heap_.size() - 1);
}

timer_engine::timer_op* timer_engine::heap_pop() {
  timer_op* top = heap_.front();
  timer_op* last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    place(0, last);
    sift_down(0);
  }
  top->heap_index = unqueued;
  return top;
}

void timer_engine::heap_erase(timer_op* op) {
  const std::size_t i = op->heap_index;
  timer_op* last = heap_.back();
  heap_.pop_back();
  op->heap_index = unqueued;
  if (last == op) return;
  place(i, last);
  sift_up(i);
  sift_down(last->heap_index);
}

core_detail::future_state<void>* start_timer(core_detail::runtime_core* core,
                                             std::chrono::steady_clock::time_point deadline,
                                             const cancellation_token& token) {
  try {
    return engine_of<timer_engine>(core).start(deadline, token);
  } catch (const task_cancelled&) {
    return failed<void>(std::current_exception());
  }
}

}  // namespace heddle::async_detail
