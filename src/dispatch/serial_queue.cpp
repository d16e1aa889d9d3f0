// Serial queues: ownership of a queue (the `active` bit), the drain that runs its items, and the
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

#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/scheduling.hpp"

namespace heddle::detail {

struct queue_extras {
  queue_state* target = nullptr;  // holds a reference
  std::mutex m;                   // guards on_error
  std::function<void(std::exception_ptr)> on_error;
};

namespace {

// Items one owner runs before it yields its worker, so that one busy queue cannot keep a worker
// from everything else (and other queues from it).
constexpr int batch_items = 128;

queue_state* target_of(const queue_state* q) noexcept {
  if (!(q->control.load(std::memory_order_relaxed) & queue_state::targeted)) return nullptr;
  return q->extras.load(std::memory_order_acquire)->target;
}

// Takes `active` if the queue is neither owned nor suspended. The caller has seen items pending.
bool try_acquire(queue_state* q) noexcept {
  // seq_cst: after a producer's exchange on the tail, this load must not read a stale `active`
  // that the owner has already cleared before its own look at the tail.
  std::uint32_t c = q->control.load(std::memory_order_seq_cst);
  while (!(c & (queue_state::active | queue_state::suspend_mask)))
    if (q->control.compare_exchange_weak(c, c | queue_state::active, std::memory_order_seq_cst,
                                         std::memory_order_relaxed))
      return true;
  return false;
}

// Gives up `active`, then looks at the list once more: an item pushed while the owner still held
// it found the queue owned and left the wake-up to the owner. True if ownership was taken again.
bool release_and_recheck(queue_state* q) noexcept {
  q->control.fetch_and(~queue_state::active, std::memory_order_seq_cst);
  if (!q->tail.load(std::memory_order_seq_cst)) return false;
  return try_acquire(q);
}

// The first item of a non-empty list, once its producer has published it (it may be between its
// swap and its store).
queue_item* first_item(queue_state* q) noexcept {
  queue_item* it = q->head.load(std::memory_order_acquire);
  while (!it) {
    cpu_relax();
    it = q->head.load(std::memory_order_acquire);
  }
  return it;
}

// Unlinks `it`, the first item. True if it was the last: the list is empty from here on, and a
// producer that comes now publishes the head and tries to wake the queue.
bool unlink_first(queue_state* q, queue_item* it) noexcept {
  queue_item* next = it->next.load(std::memory_order_acquire);
  if (!next) {
    q->head.store(nullptr, std::memory_order_relaxed);
    queue_item* expected = it;
    if (q->tail.compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst)) return true;
    // A producer swapped itself in after `it` and is about to link it.
    while (!(next = it->next.load(std::memory_order_acquire))) cpu_relax();
  }
  q->head.store(next, std::memory_order_relaxed);
  return false;
}

enum class drain_end { released, yielded };

// Runs items while the calling thread owns q, at most `budget` of them, or until `stop_when` is
// done. `yielded`: q is still owned (and may have items left); `released`: q is no longer owned by
// this thread.
drain_end drain(queue_state* q, int budget, const future_state_base* stop_when = nullptr) noexcept {
  queue_frame_scope frame(q);
  for (;;) {
    if (!q->tail.load(std::memory_order_seq_cst)) {
      // Nothing left: a producer's wake-up can lose the race to the previous owner, which then ran
      // the producer's item before this owner started.
      if (!release_and_recheck(q)) return drain_end::released;
      continue;
    }
    queue_item* it = first_item(q);
    if (q->control.load(std::memory_order_seq_cst) & queue_state::suspend_mask) {
      // Suspended: the items wait; resume() wakes the queue.
      if (!release_and_recheck(q)) return drain_end::released;
      continue;
    }
    const bool last = unlink_first(q, it);
    it->vt->run(it, q);
    if (last && !release_and_recheck(q)) return drain_end::released;
    if (--budget == 0 || (stop_when && stop_when->is_done())) return drain_end::yielded;
  }
}

// The runtime is gone (or going): the owner discards everything instead of running it.
void discard_all(queue_state* q) noexcept {
  do {
    while (q->tail.load(std::memory_order_seq_cst)) {
      queue_item* it = first_item(q);
      const bool last = unlink_first(q, it);
      it->vt->discard(it);
      if (last) break;
    }
  } while (release_and_recheck(q));
}

void schedule_owner(queue_state* q) noexcept;

// The owner of a queue that runs on the scheduler.
struct drain_task final : task_base {
  explicit drain_task(queue_state* queue) noexcept : task_base(&vtable), q(queue) {}
  queue_state* q;

  // False if a sync() caller took the queue over before this task started: then it only goes.
  static bool claim(drain_task* self) noexcept {
    task_base* expected = self;
    if (self->q->pending_drain.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return true;
    queue_state* q = self->q;
    free_record(self);
    release(q);
    return false;
  }
  static void execute(task_base* t) noexcept {
    auto* self = static_cast<drain_task*>(t);
    if (!claim(self)) return;
    queue_state* q = self->q;
    if (drain(q, batch_items) == drain_end::yielded) {
      // Behind what is already waiting: the express lane for a high-priority queue, else the
      // injection queue, which workers reach after their own deque.
      q->pending_drain.store(self, std::memory_order_release);
      if (q->control.load(std::memory_order_relaxed) & queue_state::high_priority) submit_express(q->core, self);
      else inject(q->core, self);
      return;
    }
    free_record(self);
    release(q);
  }
  static void discard(task_base* t) noexcept {
    auto* self = static_cast<drain_task*>(t);
    if (!claim(self)) return;
    queue_state* q = self->q;
    free_record(self);
    discard_all(q);
    release(q);
  }
  static constexpr task_vtable vtable{&execute, &discard};
};

// The owner of a queue that targets another: an item of the target.
struct drain_item final : queue_item {
  explicit drain_item(queue_state* queue) noexcept : queue_item(&vtable), q(queue) {}
  queue_state* q;

  static void run(queue_item* i, queue_state* target) noexcept {
    auto* self = static_cast<drain_item*>(i);
    queue_state* q = self->q;
    if (drain(q, batch_items) == drain_end::yielded) return enqueue(target, self);  // behind the target's others
    free_record(self);
    release(q);
  }
  static void discard(queue_item* i) noexcept {
    auto* self = static_cast<drain_item*>(i);
    queue_state* q = self->q;
    free_record(self);
    discard_all(q);
    release(q);
  }
  static constexpr queue_item_vtable vtable{&run, &discard};
};

// q was just acquired: its owner holds a reference until it releases `active` for good.
void schedule_owner(queue_state* q) noexcept {
  retain(q);
  try {
    if (queue_state* t = target_of(q)) return enqueue(t, make_record<drain_item>(q));
    auto* d = make_record<drain_task>(q);
    q->pending_drain.store(d, std::memory_order_release);
    if (q->control.load(std::memory_order_relaxed) & queue_state::high_priority) submit_express(q->core, d);
    else schedule(q->core, d);
  } catch (...) {
    std::fputs("heddle: out of memory while waking a serial queue\n", stderr);
    std::terminate();
  }
}

void destroy(queue_state* q) noexcept {
  // Nobody refers to the queue any more, so nobody owns it: items left are those of a queue
  // dropped while suspended, or left by a stopped runtime.
  queue_item* it = q->head.load(std::memory_order_relaxed);
  while (it) {
    queue_item* next = it->next.load(std::memory_order_relaxed);
    it->vt->discard(it);
    it = next;
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

queue_state* make_queue(runtime_core* core, const char* label, std::size_t label_len, queue_state* target,
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
  if (q->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(q);
}

void wake(queue_state* q) noexcept {
  if (try_acquire(q)) schedule_owner(q);
}

void end_inline(queue_state* q) noexcept {
  if (release_and_recheck(q)) schedule_owner(q);
}

namespace {
// Takes over the first queue along q's target chain whose drain task has not started (the root of
// the chain owns the others through items), and runs its items until `item` has run. False if no
// drain was waiting to start.
bool take_over_for(queue_state* q, const future_state_base* item) noexcept {
  for (queue_state* s = q; s; s = target_of(s)) {
    if (s->control.load(std::memory_order_relaxed) & queue_state::targeted) continue;
    if (s->pending_drain.load(std::memory_order_relaxed) && s->pending_drain.exchange(nullptr, std::memory_order_acq_rel)) {
      // This thread owns s now; the superseded task frees itself when it runs.
      if (drain(s, std::numeric_limits<int>::max(), item) == drain_end::yielded) end_inline(s);
      return true;
    }
  }
  return false;
}
}  // namespace

void wait_sync(queue_state* q, future_state_base* item) {
  worker* w = current_worker;
  // Only a worker of the queue's runtime takes a queue over: items run on that runtime's workers.
  if (!w || w->core != q->core) return force(item);
  if (!current_queue_frame) {
    if (!item->is_done()) take_over_for(q, item);
    return force(item);
  }
  // Inside an item, this thread holds a queue: helping with other work could run, on top of that
  // item, an item that needs the held queue (a deadlock the program does not have). So it runs
  // only the queues it waits for, when their drain has not started, and otherwise waits, spinning
  // briefly and then sleeping in short steps (so that it notices a drain that yielded).
  using clock = std::chrono::steady_clock;
  auto spin_until = clock::now() + std::chrono::microseconds(20);
  while (!item->is_done()) {
    if (take_over_for(q, item)) {
      spin_until = clock::now() + std::chrono::microseconds(20);
      continue;
    }
    if (clock::now() < spin_until) {
      for (int i = 0; i < 32; ++i) cpu_relax();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void suspend(queue_state* q) noexcept { q->control.fetch_add(queue_state::suspend_unit, std::memory_order_seq_cst); }

void resume(queue_state* q) {
  std::uint32_t c = q->control.load(std::memory_order_relaxed);
  do {
    if (!(c & queue_state::suspend_mask))
      throw std::logic_error("heddle::serial_queue::resume: " + describe(q) + " is not suspended");
  } while (!q->control.compare_exchange_weak(c, c - queue_state::suspend_unit, std::memory_order_seq_cst,
                                             std::memory_order_relaxed));
  if (((c - queue_state::suspend_unit) & queue_state::suspend_mask) == 0 && q->tail.load(std::memory_order_seq_cst))
    wake(q);
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
struct delayed_item final : completion_hook {
  delayed_item(queue_state* queue, queue_item* i) noexcept : completion_hook(&fire), q(queue), item(i) {}
  queue_state* q;
  queue_item* item;

  static void fire(completion_hook* h, std::exception_ptr error) noexcept {
    auto* self = static_cast<delayed_item*>(h);
    queue_state* q = self->q;
    queue_item* item = self->item;
    free_record(self);
    if (error) item->vt->discard(item);  // the runtime stopped before the deadline
    else enqueue(q, item);
    release(q);
  }
};
}  // namespace

void enqueue_at(queue_state* q, std::chrono::steady_clock::time_point deadline, queue_item* item) {
  delayed_item* d = nullptr;
  try {
    d = make_record<delayed_item>(q, item);
    future_state<void>* timer = start_timer(q->core, deadline, {});
    retain(q);
    d->hook(timer);
  } catch (...) {
    if (d) free_record(d);
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
      std::fprintf(stderr, "heddle: the error handler of %s threw\n", describe(q).c_str());
      std::terminate();
    }
  }
  std::string what = "(not a std::exception)";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    what = x.what();
  } catch (...) {
  }
  std::fprintf(stderr, "heddle: an item of %s threw, and the queue has no error handler: %s\n",
               q ? describe(q).c_str() : "the concurrent queue", what.c_str());
  std::terminate();
}

}  // namespace heddle::detail

namespace heddle {

namespace {
detail::queue_state* new_queue(detail::runtime_core* core, std::string_view label, detail::queue_state* target,
                               bool high) {
  return detail::make_queue(core, label.data(), label.size(), target, high);
}
}  // namespace

serial_queue::serial_queue(std::string_view label, queue_priority priority)
    : s_(new_queue(detail::current_core(), label, nullptr, priority == queue_priority::high)) {}

serial_queue::serial_queue(runtime& rt, std::string_view label, queue_priority priority)
    : s_(new_queue(rt.core(), label, nullptr, priority == queue_priority::high)) {}

serial_queue::serial_queue(std::string_view label, const serial_queue& target) : s_(nullptr) {
  target.check();
  detail::queue_state* t = target.state();
  const bool high = t->control.load(std::memory_order_relaxed) & detail::queue_state::high_priority;
  s_ = new_queue(t->core, label, t, high);
}

void serial_queue::set_error_handler(std::function<void(std::exception_ptr)> handler) {
  check();
  detail::set_error_handler(s_, std::move(handler));
}

void serial_queue::check() const {
  if (!s_) throw std::logic_error("heddle::serial_queue: the handle was moved from");
}

}  // namespace heddle
