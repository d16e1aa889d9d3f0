// SPDX-License-Identifier: Apache-2.0
// The runtime's list of suspended coroutine chains (coroutine.hpp): what lets a runtime that stops
// destroy the frames of coroutines that wait on futures nothing will complete in its lifetime.
#include "heddle/core/detail/coroutine.hpp"

#include <sched.h>

#include "runtime_core.hpp"

namespace heddle::core_detail {

void enlist_suspended(runtime_core* core, coroutine_root* r, void* awaited, continuation* waiter,
                      bool (*detach)(coroutine_root*) noexcept) noexcept {
  r->awaited = awaited;
  r->waiter = waiter;
  r->detach = detach;
  core->enlist_suspended(r);
}

bool run_own_work_traced(worker* w, future_state_base* s) noexcept { return run_own_work<true>(w, s); }

void free_frame_block_outside(frame_header* block) noexcept {
  const std::size_t cls = block->size_class;
  if (cls < num_size_classes) return deallocate_block(block, cls);
  ::operator delete(static_cast<void*>(block));
}

void delist_suspended(runtime_core* core, coroutine_root* r) noexcept { (void)core->delist_suspended(r, false); }

void resume_suspended(runtime_core* core, coroutine_root* r, successor_start& start, task_base* t) noexcept {
  runtime_core::suspended_stripe& st = core->delist_suspended(r, /*resuming=*/true);
  start.release(t);  // the frame that holds `start` (and `r`) may be gone after this (a discarded resumption)
  st.resumption_started();
}

void runtime_core::enlist_suspended(coroutine_root* r) noexcept {
  suspended_stripe& st = stripe_of(r);
  std::lock_guard lock(st.m);
  r->prev = nullptr;
  r->next = st.head;
  if (st.head) st.head->prev = r;
  st.head = r;
}

runtime_core::suspended_stripe& runtime_core::delist_suspended(coroutine_root* r, bool resuming) noexcept {
  suspended_stripe& st = stripe_of(r);
  std::lock_guard lock(st.m);
  if (resuming) st.resuming.fetch_add(1, std::memory_order_relaxed);
  if (r->prev) r->prev->next = r->next;
  else st.head = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = nullptr;
  return st;
}

// With the workers gone, the services stopped and the queues drained: every chain still listed
// waits on a future that nothing completed (a promise kept past the runtime, an operation of another
// runtime's). Each is detached from its state (the attached continuation taken back, or a shared
// state's relay emptied: whoever completes the state later finds nobody to resume) and destroyed as
// a queued chain is: its frames' locals destroyed, spawn's future failed with task_cancelled. A
// chain whose state is completing right now cannot be taken back: its completer takes it off its
// stripe and queues its resumption, which the drained queues discard (the same destruction); the
// sweep waits until every such start is made (each stripe's `resuming`), as the completer still
// uses this runtime until then. Destroying a chain may complete futures that chains of any stripe
// wait on, so the sweep looks at every stripe again after each one.
void runtime_core::destroy_suspended() noexcept {
  for (;;) {
    bool quiet = true;
    coroutine_root* detached = nullptr;
    for (std::size_t i = 0; i < stripes() && !detached; ++i) {
      suspended_stripe& st = suspended_[i];
      std::lock_guard lock(st.m);
      coroutine_root* r = st.head;
      if (!r && st.resuming.load(std::memory_order_acquire) == 0) continue;
      quiet = false;
      if (r && r->detach(r)) {
        st.head = r->next;
        if (st.head) st.head->prev = nullptr;
        r->next = nullptr;
        detached = r;
      }
    }
    if (quiet) return;
    if (detached) detached->abandon(detached);  // may complete futures other listed chains wait on
    else ::sched_yield();
  }
}

}  // namespace heddle::core_detail
