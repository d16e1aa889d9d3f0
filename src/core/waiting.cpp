// SPDX-License-Identifier: Apache-2.0
// Waiting for a future or a task group: helping on a worker, sleeping elsewhere.
//
// The helping policy, which bounds how deep waits nest on a worker's stack:
//  1. tasks on the worker's own deque (in fork-join code: the awaited task's siblings and children)
//     when the awaited future is a task's or a task group's. A future that is no task's (a promise, an
//     async operation, a when_all, a serial queue's sync) has no relation to that deque: its tasks
//     count as other work (4.), or a loop whose every iteration waits so would nest one wait per
//     iteration on the stack;
//  2. the express lane, whose tasks are short by contract;
//  3. if the awaited task was stolen, tasks stolen back from its thief only (leapfrogging): those
//     are the awaited task's descendants, so nesting is bounded by the depth of the task tree;
//  4. otherwise other work (injected or stolen anywhere), but only while at least a quarter of the
//     worker's stack is left. Beyond that the worker sleeps until the awaited work is done or work it
//     may take appears (and says so once on stderr): without such a bound a waiting worker can nest
//     unrelated waits until its stack overflows. A count of nested tasks would be no substitute: a
//     program whose waits depend on injected work deadlocks at any fixed count.
//
// A waiter inside an isolation region (heddle::isolate: the worker's isolation is not 0) takes only
// tasks of that region, so that it never runs an unrelated task that may need a lock it holds:
//  1. from its own deque, the bottom-most task of the region (or the awaited task itself) among the
//     last 8; those of other regions above it go back (pop, check, push: a record is read only
//     once owned);
//  2. not the express lane, not the injection queue (anybody's tasks);
//  3. tasks stolen back from the awaited task's thief, and
//  4. (within the stack budget) tasks stolen from workers now running in the region, whose deques
//     hold mostly its tasks. A record is owned before its tag can be read, so one of another region
//     that such a steal takes goes back to the injection queue (runtime_stats::isolation_requeues).
// Otherwise it sleeps until the awaited work is done or work of its region appears. The workers'
// scheduling loops, which wait for nothing, run tasks of any region.
#include <chrono>
#include <cstdio>

#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/task_group.hpp"
#include "runtime_core.hpp"

namespace heddle::core_detail {

namespace {

// What a waiter waits for.
struct wait_target {
  virtual bool done() const noexcept = 0;
  // The worker that stole the awaited task, if any.
  virtual worker* thief() const noexcept { return nullptr; }
  // Whether the worker's own deque holds the awaited work's relatives (rule 1 above).
  virtual bool awaits_tasks() const noexcept { return true; }
  // Arranges for completion to wake the waiter; false if already complete.
  virtual bool arm(worker* w) noexcept = 0;
  // The awaited task's record, which an isolated waiter may run whatever its region; or nullptr.
  virtual const task_base* awaited() const noexcept { return nullptr; }

 protected:
  ~wait_target() = default;
};

bool may_take_unrelated(const worker* w) noexcept {
  return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) > w->stack_limit;
}

void warn_stack_budget_once() noexcept {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true, std::memory_order_relaxed))
    std::fputs("heddle: a waiting worker has used three quarters of its stack helping other tasks; it now "
               "sleeps instead of taking unrelated work (raise runtime_options::stack_bytes if this "
               "program nests waits this deeply)\n",
               stderr);
}

// A task the waiter may run now under the policy above, or nullptr.
task_base* work_for_waiter(runtime_core& core, worker* w, const wait_target& target) {
  if (target.awaits_tasks() || may_take_unrelated(w))
    if (task_base* t = w->deque.pop()) return t;
  if (core.express_pending())
    if (task_base* t = core.take_express()) return t;
  worker* thief = target.thief();
  // Look before stealing back: a busy thief's deque is often empty, and a steal attempt writes.
  if (thief && thief->core == &core && thief != w && !thief->deque.looks_empty())
    if (task_base* t = core.steal_from(w, thief)) return t;
  if (!may_take_unrelated(w)) {
    if (core.work_visible(w)) warn_stack_budget_once();
    return nullptr;
  }
  if (task_base* t = core.take_injected()) return t;
  return core.steal_any(w);
}

// Puts back on w's deque a task it popped and may not run. A worker that looked at the deque while
// the task was off it may have gone to sleep: wake one as a spawn does (spawn_local's fence).
void push_back_own(worker* w, task_base* t) {
  w->deque.push(t);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (w->sleepers->load(std::memory_order_relaxed) != 0) wake_one_sleeper(w->core);
}

// The bottom-most task of region `iso` (or the awaited one) among the last few on w's own deque;
// the tasks of other regions above it go back in their order. A nested region that returned
// without waiting for its tasks leaves them above the region's own; looking a few deep keeps those
// from hiding the region's tasks from the waiter (with one worker it would wait forever).
task_base* pop_own_of_region(worker* w, std::uint32_t iso, const task_base* awaited) {
  constexpr int depth = 8;
  task_base* skipped[depth];
  int n = 0;
  task_base* found = nullptr;
  while (n < depth) {
    task_base* t = w->deque.pop();
    if (!t) break;
    if (t->isolation == iso || t == awaited) {
      found = t;
      break;
    }
    skipped[n++] = t;
  }
  while (n > 0) push_back_own(w, skipped[--n]);
  return found;
}

// The same for a waiter inside isolation region `iso` (the second list above).
task_base* isolated_work_for_waiter(runtime_core& core, worker* w, const wait_target& target, std::uint32_t iso) {
  if (target.awaits_tasks() || may_take_unrelated(w))
    if (task_base* t = pop_own_of_region(w, iso, target.awaited())) return t;
  worker* thief = target.thief();
  if (thief && thief->core == &core)
    if (task_base* t = core.steal_isolated(w, thief, iso)) return t;
  if (!may_take_unrelated(w)) {
    if (core.isolated_work_visible(w, iso)) warn_stack_budget_once();
    return nullptr;
  }
  return core.steal_any_isolated(w, iso);
}

// Its own deque is no reason to wake: nothing is pushed there while it sleeps, and what is there
// was found to be of another region.
bool isolated_waiter_has_work(runtime_core& core, const worker* w, const wait_target& target,
                              std::uint32_t iso) noexcept {
  if (target.done()) return true;
  if (worker* thief = target.thief(); thief && thief->core == &core &&
                                      thief->isolation.load(std::memory_order_relaxed) == iso &&
                                      !thief->deque.looks_empty())
    return true;
  return may_take_unrelated(w) && core.isolated_work_visible(w, iso);
}

bool waiter_has_work(runtime_core& core, const worker* w, const wait_target& target) noexcept {
  if (target.done() || core.express_pending()) return true;
  if (!w->deque.looks_empty() && (target.awaits_tasks() || may_take_unrelated(w))) return true;
  if (worker* thief = target.thief(); thief && thief->core == &core && !thief->deque.looks_empty()) return true;
  return may_take_unrelated(w) && core.work_visible(w);
}

void help(worker* w, wait_target& target) {
  runtime_core& core = *w->core;
  // Constant during the wait: the tasks it runs restore it when they return.
  const std::uint32_t iso = w->isolation.load(std::memory_order_relaxed);
  spin_then_park spinner(spin::worker_budget);
  for (;;) {
    if (target.done()) return;
    if (task_base* t = iso ? isolated_work_for_waiter(core, w, target, iso) : work_for_waiter(core, w, target)) {
      core.execute_nested(w, t);
      spinner.restart();
      continue;
    }
    if (spinner.keep_spinning()) continue;
    if (!target.arm(w)) return;
    core.lot().park(w, parking_lot::sleeper_kind::waiting, [&] {
      return iso ? isolated_waiter_has_work(core, w, target, iso) : waiter_has_work(core, w, target);
    });
    spinner.restart();
  }
}

struct future_target final : wait_target {
  explicit future_target(future_state_base* s) : s(s) {}
  bool done() const noexcept override { return s->is_done(); }
  worker* thief() const noexcept override { return s->thief.load(std::memory_order_relaxed); }
  // Only records that run as tasks have a run function; promises, operations and the like do not.
  bool awaits_tasks() const noexcept override { return s->fvt()->run != nullptr; }
  bool arm(worker* w) noexcept override {
    worker_wake_node* node = &w->waiter;
    // Attached by an earlier round of this wait: its completer wakes it once, and counts it once.
    if (s->state.load(std::memory_order_acquire) == reinterpret_cast<std::uintptr_t>(node)) return true;
    node->attached.fetch_add(1, std::memory_order_relaxed);
    if (s->attach_waiter(node)) return true;
    node->attached.fetch_sub(1, std::memory_order_relaxed);  // done already: no completer will wake it
    return false;
  }
  const task_base* awaited() const noexcept override { return s->fvt()->run ? s : nullptr; }
  future_state_base* s;
};

// A thread outside the runtime spins a little for `done` before it sleeps.
template <class Done>
void spin_briefly(Done&& done) {
  for (spin_then_park spinner(spin::outsider_budget); !done() && spinner.keep_spinning();) {
  }
}

// One waiter sleeping on one completion: a thread outside the runtime, or a worker (`helper`) that
// helps while it waits. ready() reads what it needs before it publishes: the waiter (and this node,
// on its stack) may be gone right after. A thread's wake is a futex wake on the word's address, which
// touches no memory. A worker's wake writes to the worker, which its runtime frees once the waiter
// has returned: so `signalled` goes to `waking` first (the waiter may stop helping) and to `woken`
// once the wake is done, and the waiter returns only then (settle()).
struct sleeping_waiter : continuation {
  static constexpr std::uint32_t waiting = 0, waking = 1, woken = 2;
  explicit sleeping_waiter(worker* w) : helper(w) { ready = &on_ready; }
  static void on_ready(continuation* c) noexcept {
    auto* self = static_cast<sleeping_waiter*>(c);
    if (worker* w = self->helper) {
      self->signalled.store(waking, std::memory_order_release);
      parking_lot::wake(w);
      self->signalled.store(woken, std::memory_order_release);
    } else {
      self->signalled.store(woken, std::memory_order_release);
      futex_wake(self->signalled, 1);
    }
  }
  bool signalled_yet() const noexcept { return signalled.load(std::memory_order_acquire) != waiting; }
  void sleep() noexcept {
    while (signalled.load(std::memory_order_acquire) == waiting) futex_wait(signalled, waiting);
  }
  // A few instructions and one system call away once the waiter has seen `waking`.
  void settle() const noexcept {
    for (unsigned n = 1; signalled.load(std::memory_order_acquire) != woken; ++n) spin_pause(n);
  }
  worker* helper;  // a worker that helps while it waits, or nullptr
  std::atomic<std::uint32_t> signalled{waiting};
};

}  // namespace

void help_until_ready(worker* w, future_state_base* s) {
  trace::scoped_span traced(trace::kind::wait, nullptr, 0, 0,
                            static_cast<std::uint16_t>(s->fvt()->run ? trace::wait_on::task : trace::wait_on::future));
  future_target target(s);
  help(w, target);
}

void force_traced(worker* w, future_state_base* s) { force_on_worker<true>(w, s); }

void help_after_mismatch(worker* w, future_state_base* s, task_base* t) {
  push_back_own(w, t);
  help_until_ready(w, s);
}

void block_until_ready(future_state_base* s) {
  trace::scoped_span traced(trace::kind::block, nullptr, 0, 0,
                            static_cast<std::uint16_t>(s->fvt()->run ? trace::wait_on::task : trace::wait_on::future));
  if (auto drive = s->fvt()->drive) {
    drive(s);
    if (s->is_done()) return;
  }
  spin_briefly([s] { return s->is_done(); });
  if (s->is_done()) return;
  sleeping_waiter node(nullptr);
  if (!s->attach_waiter(&node)) return;
  node.sleep();
}

namespace {

// A group whose wait_async is armed (bit 0 set on entry: one wait at a time) is waited for until
// the armed wait has let it go (its record clears the bit once it took the group's status), the
// state then zero. Nothing will wake this waiter (the group's one waiter slot is the record's), so
// it helps on a worker, each help ending when its spin is spent, and spins elsewhere.
void wait_for_armed_async(std::atomic<std::uint64_t>& state, worker* w) {
  if (w) {
    struct drained final : wait_target {
      explicit drained(std::atomic<std::uint64_t>& st) : state(st) {}
      bool done() const noexcept override { return state.load(std::memory_order_acquire) == 0; }
      bool arm(worker*) noexcept override { return false; }
      std::atomic<std::uint64_t>& state;
    } target(state);
    for (unsigned n = 1; !target.done(); ++n) {
      help(w, target);
      spin_pause(n);
    }
    return;
  }
  for (unsigned n = 1; state.load(std::memory_order_acquire) != 0; ++n) spin_pause(n);
}

}  // namespace

// A group's waiter sets bit 0 of the state once it sleeps; from then on the finisher of the last
// task wakes it through the node and the waiter must not return before that (the finisher still
// reads the group). Without the bit, no finisher touches the group after its decrement.
void group_wait(task_group& g) {
  auto& state = g.state_;
  const std::uint64_t at_entry = state.load(std::memory_order_acquire);
  if (at_entry == 0) return;
  worker* w = current_worker;
  trace::scoped_span traced(w ? trace::kind::wait : trace::kind::block, nullptr, 0, 0,
                            static_cast<std::uint16_t>(trace::wait_on::group));
  if (at_entry & 1) return wait_for_armed_async(state, w);
  sleeping_waiter node(w);
  g.waiter_.store(&node, std::memory_order_release);
  auto arm_group = [&]() noexcept {
    std::uint64_t s = state.load(std::memory_order_acquire);
    while (s != 0)
      if (state.compare_exchange_weak(s, s | 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    return false;
  };
  bool armed = false;
  if (w) {
    struct group_target final : wait_target {
      group_target(std::atomic<std::uint64_t>& st, sleeping_waiter& n, bool& a, decltype(arm_group)& f)
          : state(st), node(n), armed(a), arm_fn(f) {}
      bool done() const noexcept override {
        return armed ? node.signalled_yet() : state.load(std::memory_order_acquire) == 0;
      }
      bool arm(worker*) noexcept override {
        if (armed) return true;
        armed = arm_fn();
        return armed;
      }
      std::atomic<std::uint64_t>& state;
      sleeping_waiter& node;
      bool& armed;
      decltype(arm_group)& arm_fn;
    } target(state, node, armed, arm_group);
    help(w, target);
    if (armed) node.settle();
  } else {
    spin_briefly([&] { return state.load(std::memory_order_acquire) == 0; });
    armed = arm_group();
    if (armed) node.sleep();
  }
  if (armed) state.fetch_and(~std::uint64_t{1}, std::memory_order_acq_rel);
}

}  // namespace heddle::core_detail
