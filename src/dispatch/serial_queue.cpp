// SPDX-License-Identifier: Apache-2.0
// Serial queues: ownership of a queue (the `owned` bit), the drain that runs its items, and the
// queue's lifetime. The protocol is in heddle/dispatch/detail/queue_state.hpp.
#include "heddle/dispatch/serial_queue.hpp"

#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/completion_hook.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/trace.hpp"
#include "heddle/dispatch/detail/access.hpp"

namespace heddle::dispatch_detail {

HEDDLE_FAST_TLS_DEFINITION(queue_frame*, current_queue_frame);

struct queue_extras {
  queue_state* target = nullptr;                  // holds a reference
  std::atomic<const char*> trace_label{nullptr};  // the label, interned when a drain is first traced
  std::mutex m;                                   // guards on_error
  std::function<void(std::exception_ptr)> on_error;
};

namespace {

// Items one owner runs before it yields its worker, so that one busy queue cannot keep a worker
// from everything else (and other queues from it).
constexpr int batch_items = 128;

queue_state* target_of(const queue_state* q) noexcept {
  if (!(q->control.load(std::memory_order_relaxed) & queue_state::targeted)) return nullptr;
  queue_extras* x = q->extras.load(std::memory_order_acquire);
  HEDDLE_ASSERT(x && x->target, "a targeted queue without its target (both fixed at creation)");
  return x->target;
}

queue_item* top_of(std::uintptr_t incoming) noexcept {
  return reinterpret_cast<queue_item*>(incoming & ~queue_state::owned);
}

// Whether the `owned` bit is set: what every call that only the owner makes checks first.
bool is_owned(const queue_state* q) noexcept {
  return q->incoming.load(std::memory_order_relaxed) & queue_state::owned;
}

// The owner's `ready` list is empty: takes everything pushed since, oldest first, into it. False
// if nothing was: then the queue is idle again, and unowned.
bool refill(queue_state* q) noexcept {
  HEDDLE_ASSERT(!q->ready, "a serial queue refilled while its ready list has items");
  std::uintptr_t in = q->incoming.load(std::memory_order_acquire);
  HEDDLE_ASSERT(in & queue_state::owned, "a serial queue refilled by a thread that does not own it");
  for (;;) {
    if (top_of(in)) break;
    if (q->incoming.compare_exchange_weak(in, 0, std::memory_order_acq_rel, std::memory_order_acquire)) return false;
  }
  queue_item* it = top_of(q->incoming.exchange(queue_state::owned, std::memory_order_acquire));
  queue_item* oldest_first = nullptr;
  while (it) {
    queue_item* below = it->next.load(std::memory_order_acquire);
    while (below == linking) {  // its producer is between its exchange and its link
      core_detail::cpu_relax();
      below = it->next.load(std::memory_order_acquire);
    }
    it->next.store(oldest_first, std::memory_order_relaxed);
    oldest_first = it;
    it = below;
  }
  q->ready = oldest_first;
  return true;
}

void discard_all(queue_state* q) noexcept;

// The caller owns q, which has items. If q is suspended, it gives q up and returns true: q is
// parked (still owned, so producers only push; resume() schedules a new owner), or, if no handle
// is left to resume it, emptied (its items discarded).
bool stop_if_suspended(queue_state* q) noexcept {
  HEDDLE_ASSERT(is_owned(q), "a serial queue parked by a thread that does not own it");
  std::uint32_t c = q->control.load(std::memory_order_acquire);
  while (c & queue_state::suspend_mask) {
    if (c & queue_state::dead) {
      HEDDLE_ASSERT(q->handles.load(std::memory_order_relaxed) == 0,
                    "a serial queue marked dead while a handle is left");
      discard_all(q);
      return true;
    }
    if (q->control.compare_exchange_weak(c, c | queue_state::parked, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
      return true;
  }
  return false;
}

queue_item* pop_ready(queue_state* q) noexcept {
  queue_item* it = q->ready;
  HEDDLE_ASSERT(it != nullptr, "an item popped from a serial queue's empty ready list");
  q->ready = it->next.load(std::memory_order_relaxed);
  return it;
}

enum class drain_end { released, yielded };

// Runs items while the calling thread owns q, at most `budget` of them, or until `stop_when` is
// done. `yielded`: q is still owned by the caller (and may have items left); `released`: it is
// idle, or parked, and no longer the caller's.
drain_end run_items(queue_state* q, int budget, const core_detail::future_state_base* stop_when, bool traced,
                    std::uint32_t& ran) noexcept {
  for (;;) {
    if (!q->ready && !refill(q)) return drain_end::released;
    // Suspended: the items wait; resume() schedules an owner.
    if (stop_if_suspended(q)) return drain_end::released;
    queue_item* it = pop_ready(q);
    if (traced && core_detail::trace::sampled(it)) [[unlikely]]
      core_detail::trace::emit_instant(trace_kinds::item_end, nullptr, 0, 0, reinterpret_cast<std::uintptr_t>(it));
    it->vt->run(it, q);
    ++ran;
    if (--budget == 0 || (stop_when && stop_when->is_done())) return drain_end::yielded;
  }
}

// The label a traced drain is recorded under: interned once per queue (a lock, the first time a
// drain of it is traced) and kept in its extras, as the queue's own copy goes with the queue.
const char* traced_label(queue_state* q) noexcept {
  if (!q->label()[0]) return "serial queue";
  queue_extras* x = q->extras.load(std::memory_order_acquire);
  if (x)
    if (const char* l = x->trace_label.load(std::memory_order_acquire)) return l;
  try {
    const char* l = heddle::trace::intern(q->label());
    if (!x) {
      auto* fresh = new queue_extras;
      if (q->extras.compare_exchange_strong(x, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) x = fresh;
      else delete fresh;
    }
    x->trace_label.store(l, std::memory_order_release);
    return l;
  } catch (...) {
    return "serial queue";  // out of memory: the drain is recorded unlabelled
  }
}

drain_end drain(queue_state* q, int budget, const core_detail::future_state_base* stop_when = nullptr) noexcept {
  queue_frame_scope frame(q);
  std::uint32_t ran = 0;
  if (!core_detail::trace::on()) [[likely]]
    return run_items(q, budget, stop_when, false, ran);
  const std::uint64_t t0 = core_detail::trace::now();
  const char* label = traced_label(q);
  const drain_end end = run_items(q, budget, stop_when, true, ran);
  if (ran) core_detail::trace::emit_span(trace_kinds::queue_drain, t0, core_detail::trace::now(), label, 0, ran);
  return end;
}

// The runtime is gone (or going): the owner discards everything instead of running it.
void discard_all(queue_state* q) noexcept {
  do {
    while (q->ready) {
      queue_item* it = pop_ready(q);
      it->vt->discard(it);
    }
  } while (refill(q));
}

void schedule_owner(queue_state* q) noexcept;

// Hands q to drain task d, which takes it when it starts by clearing `drain_pending` (unless a
// sync() caller clears it first). A high-priority queue's drain goes on the express lane; else a
// drain that yields goes behind what already waits (the injection queue, which workers reach
// after their own deque), and a new one on the caller's deque.
void post_drain(queue_state* q, core_detail::task_base* d, bool yielded) {
  HEDDLE_ASSERT(is_owned(q), "a drain posted for a serial queue nobody owns");
  const std::uint32_t c = q->control.fetch_or(queue_state::drain_pending, std::memory_order_release);
  // The owner hands the queue to one drain at a time; a take-over clears the bit before it runs.
  HEDDLE_ASSERT(!(c & queue_state::drain_pending), "a second drain posted for a serial queue");
  HEDDLE_ASSERT(!(c & queue_state::targeted), "a drain task posted for a queue that runs inside another");
  if (c & queue_state::high_priority) core_detail::submit_express(q->core, d);
  else if (yielded) core_detail::inject(q->core, d);
  else core_detail::schedule(q->core, d);
}

// The owner of a queue that runs on the scheduler.
struct drain_task final : core_detail::task_base {
  explicit drain_task(queue_state* queue) noexcept : core_detail::task_base(&vtable), q(queue) {}
  queue_state* q;

  // False if a sync() caller took the queue over before this task started: then it only goes.
  static bool claim(drain_task* self) noexcept {
    queue_state* q = self->q;
    if (q->control.fetch_and(~queue_state::drain_pending, std::memory_order_acq_rel) & queue_state::drain_pending)
      return true;
    core_detail::free_record(self);
    release(q);
    return false;
  }
  static void execute(core_detail::task_base* t) noexcept {
    auto* self = static_cast<drain_task*>(t);
    if (!claim(self)) return;
    queue_state* q = self->q;
    drain_end end;
    // A batch done: yields only if other work waits (moving the queue to another worker for
    // nothing would cost each of its items the misses of a foreign cache).
    while ((end = drain(q, batch_items)) == drain_end::yielded && !core_detail::work_waiting(q->core)) {
    }
    if (end == drain_end::yielded) return post_drain(q, self, true);
    core_detail::free_record(self);
    release(q);
  }
  static void discard(core_detail::task_base* t) noexcept {
    auto* self = static_cast<drain_task*>(t);
    if (!claim(self)) return;
    queue_state* q = self->q;
    core_detail::free_record(self);
    discard_all(q);
    release(q);
  }
  static constexpr core_detail::task_vtable vtable{&execute, &discard};
};

// The owner of a queue that targets another: an item of the target.
struct drain_item final : queue_item {
  explicit drain_item(queue_state* queue) noexcept : queue_item(&vtable), q(queue) {}
  queue_state* q;

  static void run(queue_item* i, queue_state* target) noexcept {
    auto* self = static_cast<drain_item*>(i);
    queue_state* q = self->q;
    if (drain(q, batch_items) == drain_end::yielded) return enqueue(target, self);  // behind the target's others
    core_detail::free_record(self);
    release(q);
  }
  static void discard(queue_item* i) noexcept {
    auto* self = static_cast<drain_item*>(i);
    queue_state* q = self->q;
    core_detail::free_record(self);
    discard_all(q);
    release(q);
  }
  static constexpr queue_item_vtable vtable{&run, &discard};
};

// The caller owns q, which has (or may have) items: the owner it schedules holds a reference until
// it gives the queue up.
void schedule_owner(queue_state* q) noexcept {
  HEDDLE_ASSERT(is_owned(q), "an owner scheduled for a serial queue its caller does not own");
  retain(q);
  try {
    if (queue_state* t = target_of(q)) return enqueue(t, core_detail::make_record<drain_item>(q));
    post_drain(q, core_detail::make_record<drain_task>(q), false);
  } catch (...) {
    core_detail::fatal_unrecoverable("out of memory while waking a serial queue", "heddle::serial_queue");
  }
}

void destroy(queue_state* q) noexcept {
  // Nobody refers to the queue any more, so nobody owns it: items left are those of a queue
  // dropped while suspended, or left by a stopped runtime.
  HEDDLE_ASSERT(q->handles.load(std::memory_order_relaxed) == 0, "a serial queue destroyed while a handle is left");
  for (queue_item* list : {q->ready, top_of(q->incoming.load(std::memory_order_acquire))})
    while (list) {
      queue_item* next = list->next.load(std::memory_order_relaxed);
      list->vt->discard(list);
      list = next;
    }
  if (queue_extras* x = q->extras.load(std::memory_order_acquire)) {
    if (x->target) release(x->target);
    delete x;
  }
  q->~queue_state();
  ::operator delete(q);
}

std::string describe(const queue_state* q) {
  return q->label()[0] ? "serial queue '" + std::string(q->label()) + "'" : std::string("an unlabelled serial queue");
}

}  // namespace

queue_state* make_queue(core_detail::runtime_core* core, const char* label, std::size_t label_len, queue_state* target,
                        bool high_priority) {
  void* p = ::operator new(sizeof(queue_state) + label_len + 1);
  auto* q = ::new (p) queue_state;
  q->core = core;
  char* text = reinterpret_cast<char*>(q + 1);
  if (label_len) std::memcpy(text, label, label_len);
  text[label_len] = '\0';
  std::uint32_t fixed = high_priority ? queue_state::high_priority : 0;
  if (target) {
    auto* x = new queue_extras;
    x->target = target;
    retain(target);
    q->extras.store(x, std::memory_order_relaxed);
    fixed |= queue_state::targeted;
  }
  q->control.store(fixed, std::memory_order_relaxed);
  return q;
}

void release(queue_state* q) noexcept {
  const std::uint32_t before = q->refs.fetch_sub(1, std::memory_order_acq_rel);
  HEDDLE_ASSERT(before != 0, "a serial queue released more often than retained");
  if (before == 1) destroy(q);
}

void release_handle(queue_state* q) noexcept {
  const std::uint32_t before = q->handles.fetch_sub(1, std::memory_order_acq_rel);
  HEDDLE_ASSERT(before != 0, "a serial queue's handle released more often than made");
  if (before != 1) return;
  // Nobody can resume the queue any more: if it is suspended, its items can never run.
  std::uint32_t c = q->control.load(std::memory_order_acquire);
  while (c & queue_state::suspend_mask)
    if (q->control.compare_exchange_weak(c, (c | queue_state::dead) & ~queue_state::parked, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
      if (c & queue_state::parked) discard_all(q);  // the parked queue's ownership came with the bit
      break;
    }
  release(q);  // the handles' reference
}

void wake(queue_state* q) noexcept {
  if (!stop_if_suspended(q)) schedule_owner(q);
}

void end_inline(queue_state* q) noexcept {
  HEDDLE_ASSERT(is_owned(q), "a serial queue given back by a thread that does not own it");
  if (!q->ready) {
    std::uintptr_t only_owned = queue_state::owned;
    if (q->incoming.compare_exchange_strong(only_owned, 0, std::memory_order_acq_rel, std::memory_order_relaxed))
      return;
  }
  wake(q);  // items are pending
}

namespace {
// Takes over the first queue along q's target chain whose drain task has not started (the root of
// the chain owns the others through items), and runs its items until `item` has run. False if no
// drain was waiting to start.
bool take_over_for(queue_state* q, const core_detail::future_state_base* item) noexcept {
  for (queue_state* s = q; s; s = target_of(s)) {
    if (s->control.load(std::memory_order_relaxed) & queue_state::targeted) continue;
    if ((s->control.load(std::memory_order_relaxed) & queue_state::drain_pending) &&
        (s->control.fetch_and(~queue_state::drain_pending, std::memory_order_acq_rel) & queue_state::drain_pending)) {
      // This thread owns s now; the superseded task frees itself when it runs.
      if (drain(s, std::numeric_limits<int>::max(), item) == drain_end::yielded) end_inline(s);
      return true;
    }
  }
  return false;
}
}  // namespace

void wait_sync(queue_state* q, core_detail::future_state_base* item) {
  core_detail::worker* w = core_detail::current_worker;
  // Only a worker of the queue's runtime takes a queue over: items run on that runtime's workers.
  if (!w || w->core != q->core) return core_detail::force(item);
  if (!current_queue_frame) {
    if (!item->is_done()) take_over_for(q, item);
    return core_detail::force(item);
  }
  // Inside an item, this thread holds a queue: helping with other work could run, on top of that
  // item, an item that needs the held queue (a deadlock the program does not have). So it runs
  // only the queues it waits for, when their drain has not started, and otherwise waits, spinning
  // briefly and then sleeping in short steps (so that it notices a drain that yielded).
  core_detail::spin_then_park spinner(core_detail::spin::worker_budget);
  while (!item->is_done()) {
    if (take_over_for(q, item)) {
      spinner.restart();
      continue;
    }
    if (!spinner.keep_spinning()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void suspend(queue_state* q) noexcept {
  const std::uint32_t c = q->control.fetch_add(queue_state::suspend_unit, std::memory_order_seq_cst);
  // The count's 27 bits full would carry into drain_pending.
  HEDDLE_ASSERT((c & queue_state::suspend_mask) != queue_state::suspend_mask,
                "a serial queue's suspend count overflowed");
}

void resume(queue_state* q) {
  std::uint32_t c = q->control.load(std::memory_order_relaxed), n;
  do {
    if (!(c & queue_state::suspend_mask))
      throw std::logic_error("heddle::serial_queue::resume: " + describe(q) + " is not suspended");
    n = c - queue_state::suspend_unit;
    if (!(n & queue_state::suspend_mask)) n &= ~queue_state::parked;
  } while (!q->control.compare_exchange_weak(c, n, std::memory_order_acq_rel, std::memory_order_relaxed));
  HEDDLE_ASSERT(!(c & queue_state::dead), "a serial queue resumed after its last handle went");
  if ((c & queue_state::parked) && !(n & queue_state::parked)) schedule_owner(q);  // the parked queue's new owner
}

void check_sync_allowed(queue_state* q) {
  for (queue_frame* f = current_queue_frame; f; f = f->up)
    for (queue_state* t = q; t; t = target_of(t))
      if (f->q == t) {
        std::string what = "heddle::serial_queue::sync: called on " + describe(q) + " from an item running on " +
                           describe(f->q) + "; it would wait for itself";
        throw queue_deadlock(what);
      }
}

bool runs_on(const queue_state* q) noexcept {
  for (queue_frame* f = current_queue_frame; f; f = f->up)
    if (f->q == q) return true;
  return false;
}

namespace {
struct delayed_item final : core_detail::completion_hook {
  delayed_item(queue_state* queue, queue_item* i) noexcept : core_detail::completion_hook(&fire), q(queue), item(i) {}
  queue_state* q;
  queue_item* item;

  static void fire(core_detail::completion_hook* h, std::exception_ptr error) noexcept {
    auto* self = static_cast<delayed_item*>(h);
    queue_state* q = self->q;
    queue_item* item = self->item;
    core_detail::free_record(self);
    if (error) item->vt->discard(item);  // the runtime stopped before the deadline
    else enqueue(q, item);
    release(q);
  }
};
}  // namespace

void enqueue_at(queue_state* q, std::chrono::steady_clock::time_point deadline, queue_item* item) {
  delayed_item* d = nullptr;
  try {
    d = core_detail::make_record<delayed_item>(q, item);
    core_detail::future_state<void>* timer = async_detail::start_timer(q->core, deadline, {});
    retain(q);
    d->hook(timer);
  } catch (...) {
    if (d) core_detail::free_record(d);
    item->vt->discard(item);
    throw;
  }
}

void set_error_handler(queue_state* q, std::function<void(std::exception_ptr)> handler) {
  queue_extras* x = q->extras.load(std::memory_order_acquire);
  if (!x) {
    auto* fresh = new queue_extras;
    if (q->extras.compare_exchange_strong(x, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) x = fresh;
    else delete fresh;
  }
  std::lock_guard lock(x->m);
  x->on_error = std::move(handler);
}

void report_item_error(queue_state* q, std::exception_ptr e) noexcept {
  std::function<void(std::exception_ptr)> handler;
  if (q) {
    if (queue_extras* x = q->extras.load(std::memory_order_acquire)) {
      std::lock_guard lock(x->m);
      handler = x->on_error;
    }
  }
  if (handler) {
    try {
      handler(e);
      return;
    } catch (...) {
      core_detail::fatal_unrecoverable("the error handler of " + describe(q) +
                                           " threw: " + core_detail::exception_text(std::current_exception()),
                                       "heddle::serial_queue");
    }
  }
  core_detail::fatal_unrecoverable("an item of " + (q ? describe(q) : std::string("the concurrent queue")) +
                                       " threw, and the queue has no error handler: " + core_detail::exception_text(e),
                                   q ? "heddle::serial_queue" : "heddle::concurrent_queue");
}

}  // namespace heddle::dispatch_detail

namespace heddle {

namespace {
dispatch_detail::queue_state* new_queue(core_detail::runtime_core* core, std::string_view label,
                                        dispatch_detail::queue_state* target, bool high) {
  return dispatch_detail::make_queue(core, label.data(), label.size(), target, high);
}
}  // namespace

serial_queue::serial_queue(std::string_view label, queue_priority priority)
    : s_(new_queue(core_detail::current_core(), label, nullptr, priority == queue_priority::high)) {}

serial_queue::serial_queue(runtime& rt, std::string_view label, queue_priority priority)
    : s_(new_queue(core_detail::access::core_of(rt), label, nullptr, priority == queue_priority::high)) {}

serial_queue::serial_queue(std::string_view label, const serial_queue& target) : s_(nullptr) {
  target.check();
  dispatch_detail::queue_state* t = dispatch_detail::access::state_of(target);
  const bool high = t->control.load(std::memory_order_relaxed) & dispatch_detail::queue_state::high_priority;
  s_ = new_queue(t->core, label, t, high);
}

void serial_queue::set_error_handler(std::function<void(std::exception_ptr)> handler) {
  check();
  dispatch_detail::set_error_handler(s_, std::move(handler));
}

void serial_queue::check() const {
  if (!s_) throw std::logic_error("heddle::serial_queue: the handle was moved from");
}

}  // namespace heddle
