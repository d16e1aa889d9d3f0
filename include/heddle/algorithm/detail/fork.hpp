// SPDX-License-Identifier: Apache-2.0
// Fork-join on the stack, for the algorithms whose pieces hand a value to the piece that split them
// or must all be done before the next step (the reductions, the scans' passes).
//
// A piece that splits pushes a `forked` record for its upper part onto its worker's deque, works on
// its lower part, then joins the record. The record lives in the splitting piece's stack frame, and
// so does the slot the forked work writes its result to: no allocation at all, and the frame
// outlives the record because the piece always joins before it returns. Joining pops the worker's
// own deque: when the record was not stolen it is still there and the caller runs its work itself
// (parallel_reduce then continues its own accumulator over it, with no join); when it was stolen the
// worker helps (docs/core.md, "What forcing does": it steals back from the thief) until it is done.
//
// Errors: a piece never lets an exception out between fork and join (the frame would unwind under a
// running record). It records the first one in the tree_context, which cancels the algorithm's group
// so that other pieces stop at their next check, and the root rethrows it once every piece joined.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <utility>

#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle::core_detail {

// What the pieces of one algorithm call share. Lives in the root's frame.
class tree_context {
 public:
  explicit tree_context(task_group& g) noexcept : group_(g) {}
  tree_context(const tree_context&) = delete;
  tree_context& operator=(const tree_context&) = delete;

  // True once a piece failed or the caller's token was cancelled: pieces not started are skipped.
  bool stopping() const noexcept { return group_.is_cancelling(); }
  // Keeps the first error and stops the rest.
  void fail(std::exception_ptr e) noexcept {
    if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
    group_.cancel();
  }
  // At the root, after every piece joined.
  void rethrow_if_failed() const {
    if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
  }

 private:
  task_group& group_;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

// Work forked from a piece: fn() runs once, here or on a thief, unless the tree is stopping.
// fn must not throw (pieces catch into the context); F is held by value, in the forking frame.
template <class F>
class forked final : public future_state_base {
 public:
  forked(tree_context& ctx, F fn) noexcept : future_state_base(&vtable), ctx_(ctx), fn_(std::move(fn)) {}
  forked(const forked&) = delete;
  forked& operator=(const forked&) = delete;

  // Pushes the record onto the calling worker's deque (an algorithm's pieces always run on workers).
  void fork(worker* w) noexcept { spawn_local(w, this); }

  // Takes the record back if it is still at the bottom of w's deque (not stolen): the caller then
  // does its work itself, and must not join. Otherwise false, and the caller joins.
  bool take_back(worker* w) noexcept {
    if (is_done()) return false;
    task_base* t = w->deque.pop();
    if (t == this) return true;
    // A task pushed above ours and never waited for (a dropped future): run as force() runs what it
    // pops, so that one of another isolation region is left to the helping policy (which then waits
    // for this record: the join finds it done).
    if (t) run_popped(w, this, t);
    return false;
  }
  // Runs the work here if nobody took it, else helps until the thief finishes it.
  void join() noexcept { force(this); }

 private:
  static void run(task_base* t) noexcept {
    auto* self = static_cast<forked*>(t);
    if (!self->ctx_.stopping()) self->fn_();
  }
  static void execute(task_base* t) noexcept {
    run(t);
    static_cast<forked*>(t)->complete();  // the frame may be gone right after: touch nothing
  }
  static void discard(task_base* t) noexcept {  // the runtime stopped before running it
    auto* self = static_cast<forked*>(t);
    self->ctx_.fail(shutdown_error());
    self->complete();
  }
  static void destroy(future_state_base*) noexcept {}  // never abandoned: the frame owns it
  static constexpr future_vtable vtable{{&execute, &discard}, &run, &destroy};

  tree_context& ctx_;
  F fn_;
};

// f(i) for every i in [lo, hi), forking the upper half at each level, joined before it returns:
// a fork-join loop for a few coarse items (the tiles of a scan). f's exceptions go to the context.
template <class F>
void fork_for(tree_context& ctx, std::size_t lo, std::size_t hi, const F& f) noexcept {
  if (lo >= hi || ctx.stopping()) return;
  if (hi - lo == 1) {
    try {
      f(lo);
    } catch (...) {
      ctx.fail(std::current_exception());
    }
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  auto upper = [&ctx, mid, hi, &f]() noexcept { fork_for(ctx, mid, hi, f); };
  forked<decltype(upper)> child(ctx, upper);
  child.fork(current_worker);
  fork_for(ctx, lo, mid, f);
  child.join();
}

}  // namespace heddle::core_detail
