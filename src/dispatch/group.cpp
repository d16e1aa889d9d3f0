// SPDX-License-Identifier: Apache-2.0
// Groups: the slow path of leave (the count is back at zero with notifications registered), the
// registration of notifications, and their firing. See heddle/dispatch/detail/group_state.hpp.
#include "heddle/dispatch/group.hpp"

#include "heddle/core/detail/assert.hpp"

namespace heddle::dispatch_detail {

namespace {

constexpr std::uint32_t gen_mask = 0x7fff'ffff;  // the generation has 31 bits

void append(group_node*& first, group_node*& last, group_node* n) noexcept {
  HEDDLE_ASSERT((first == nullptr) == (last == nullptr), "a group's list has a first node and no last, or the reverse");
  n->next = nullptr;
  if (last) last->next = n;
  else first = n;
  last = n;
}

void move_all_pending(group_state* g) noexcept {
  if (!g->pending) return;
  if (g->ready_last) g->ready_last->next = g->pending;
  else g->ready = g->pending;
  g->ready_last = g->pending_last;
  g->pending = g->pending_last = nullptr;
}

// Moves to `ready` the nodes registered before the leave that made generation `gen_zero`, which
// brought the count to zero. Nodes registered after it carry a generation in [gen_zero, gen_now]
// (modulo 2^31); they are the tail of the list, as registrations are ordered by the lock.
void move_due(group_state* g, std::uint32_t gen_zero, std::uint32_t gen_now) noexcept {
  const std::uint32_t since = (gen_now - gen_zero) & gen_mask;
  while (group_node* n = g->pending) {
    if (((n->gen - gen_zero) & gen_mask) <= since) break;
    g->pending = n->next;
    if (!g->pending) g->pending_last = nullptr;
    append(g->ready, g->ready_last, n);
  }
}

// Fires what is ready, outside the lock (a fired node may start code that uses the group) but in
// order: one thread fires at a time, and takes what others made ready meanwhile. The `waiters` bit
// stays set until everything is fired, so that wait() cannot return between a zero and the
// hand-over of that zero's notifications. The caller holds a reference: a fired waiter may drop
// the group's last handle while this thread still needs it.
void fire_ready(group_state* g, std::unique_lock<std::mutex>& lock) noexcept {
  if (!g->firing) {
    g->firing = true;
    while (group_node* n = g->ready) {
      g->ready = g->ready_last = nullptr;
      lock.unlock();
      while (n) {
        group_node* next = n->next;
        n->fire(n);
        n = next;
      }
      lock.lock();
    }
    g->firing = false;
  }
  HEDDLE_ASSERT(!g->ready || g->firing, "a group's due notifications left unfired with nobody firing them");
  if (!g->firing && !g->pending && !g->ready) g->word.fetch_and(~group_state::waiters, std::memory_order_acq_rel);
}

void discard_list(group_node* n) noexcept {
  while (n) {
    group_node* next = n->next;
    n->discard(n);
    n = next;
  }
}

struct queue_notification final : group_node {
  queue_state* q;
  queue_item* item;

  static void fire_it(group_node* b) noexcept {
    auto* n = static_cast<queue_notification*>(b);
    queue_state* q = n->q;
    queue_item* item = n->item;
    core_detail::free_record(n);
    enqueue(q, item);
    release(q);
  }
  static void discard_it(group_node* b) noexcept {
    auto* n = static_cast<queue_notification*>(b);
    queue_state* q = n->q;
    queue_item* item = n->item;
    core_detail::free_record(n);
    item->vt->discard(item);
    release(q);
  }
};

struct task_notification final : group_node {
  core_detail::runtime_core* core;
  core_detail::task_base* task;

  static void fire_it(group_node* b) noexcept {
    auto* n = static_cast<task_notification*>(b);
    core_detail::runtime_core* core = n->core;
    core_detail::task_base* t = n->task;
    core_detail::free_record(n);
    core_detail::schedule(core, t);
  }
  static void discard_it(group_node* b) noexcept {
    auto* n = static_cast<task_notification*>(b);
    core_detail::task_base* t = n->task;
    core_detail::free_record(n);
    t->vt->discard(t);
  }
};

struct promise_notification final : group_node {
  promise<void> done;

  static void fire_it(group_node* b) noexcept {
    auto* n = static_cast<promise_notification*>(b);
    n->done.set_value();
    core_detail::free_record(n);
  }
  static void discard_it(group_node* b) noexcept {
    core_detail::free_record(static_cast<promise_notification*>(b));  // the future fails with broken_promise
  }
};

}  // namespace

void release(group_state* g) noexcept {
  const std::uint32_t before = g->refs.fetch_sub(1, std::memory_order_acq_rel);
  HEDDLE_ASSERT(before != 0, "a group released more often than retained");
  if (before != 1) return;
  HEDDLE_ASSERT(!g->firing, "a group freed while a thread fires its notifications (which holds a reference)");
  discard_list(g->ready);
  discard_list(g->pending);
  delete g;
}

void group_zero(group_state* g, std::uint64_t word_after) noexcept {
  HEDDLE_ASSERT(group_state::count(word_after) == 0, "a group's zero called with work pending");
  retain(g);
  {
    std::unique_lock lock(g->m);
    move_due(g, group_state::gen(word_after), group_state::gen(g->word.load(std::memory_order_acquire)));
    fire_ready(g, lock);
  }
  release(g);
}

void group_unbalanced() noexcept {
  core_detail::fatal_misuse("more leave() than enter() calls", "heddle::group::leave");
}

void group_add_node(group_state* g, group_node* n) noexcept {
  retain(g);
  {
    std::unique_lock lock(g->m);
    const std::uint64_t old = g->word.fetch_or(group_state::waiters, std::memory_order_acq_rel);
    n->gen = group_state::gen(old);
    if (group_state::count(old) == 0) {
      // Zero now: every pending node has seen a zero since it was registered, and n is due at once.
      move_all_pending(g);
      append(g->ready, g->ready_last, n);
    } else {
      append(g->pending, g->pending_last, n);
    }
    fire_ready(g, lock);
  }
  release(g);
}

group_node* make_queue_notification(queue_state* q, queue_item* item) {
  auto* n = core_detail::make_record<queue_notification>();
  n->fire = &queue_notification::fire_it;
  n->discard = &queue_notification::discard_it;
  n->q = q;
  n->item = item;
  retain(q);
  return n;
}

group_node* make_task_notification(core_detail::runtime_core* core, core_detail::task_base* t) {
  auto* n = core_detail::make_record<task_notification>();
  n->fire = &task_notification::fire_it;
  n->discard = &task_notification::discard_it;
  n->core = core;
  n->task = t;
  return n;
}

future<void> group_when_empty(group_state* g) {
  auto* n = core_detail::make_record<promise_notification>();
  n->fire = &promise_notification::fire_it;
  n->discard = &promise_notification::discard_it;
  future<void> f = n->done.get_future();
  group_add_node(g, n);
  return f;
}

}  // namespace heddle::dispatch_detail

namespace heddle {

group::group() : s_(new dispatch_detail::group_state) {}

void group::wait() {
  // Zero, and no notification of an earlier zero still being handed over (the `waiters` bit stays
  // set until they all are): done. Otherwise wait behind them.
  const std::uint64_t w = s_->word.load(std::memory_order_acquire);
  if (dispatch_detail::group_state::count(w) == 0 && !(w & dispatch_detail::group_state::waiters)) return;
  when_empty().wait();
}

}  // namespace heddle
