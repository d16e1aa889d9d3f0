// SPDX-License-Identifier: Apache-2.0
// Starting successors by strategy (strategy.hpp) and measuring how long they waited.
#include <sched.h>

#include "heddle/core/detail/cancel_state.hpp"
#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "runtime_core.hpp"

namespace heddle::core_detail {

namespace {

// A successor offered to both the workers and the asap pool: two queue entries, one claim.
class asap_offer {
 public:
  asap_offer(runtime_core* core, task_base* successor) noexcept : core_(core), successor_(successor) {}

  void post(asap_pool& pool) {
    core_->submit_express(&to_workers_);
    pool.offer(&to_pool_);
  }

 private:
  struct side : task_base {
    side(asap_offer* o, bool pool) noexcept : task_base(&vtable), offer(o), by_pool(pool) {}
    asap_offer* offer;
    bool by_pool;
    static void execute(task_base* t) noexcept {
      auto* s = static_cast<side*>(t);
      asap_offer* o = s->offer;
      if (o->claim()) {
        o->core_->count_asap(s->by_pool);
        runtime_core::run(o->successor_, trace::how::successor);
      }
      o->release();
    }
    static void discard(task_base* t) noexcept {
      asap_offer* o = static_cast<side*>(t)->offer;
      if (o->claim()) o->successor_->vt->discard(o->successor_);
      o->release();
    }
    static constexpr task_vtable vtable{&execute, &discard};
  };

  bool claim() noexcept { return !claimed_.exchange(true, std::memory_order_acq_rel); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) free_record(this);
  }

  runtime_core* core_;
  task_base* successor_;
  side to_workers_{this, false};
  side to_pool_{this, true};
  std::atomic<bool> claimed_{false};
  std::atomic<int> refs_{2};
};

}  // namespace

void start_successor(runtime_core* core, task_base* t, strategy how) noexcept {
  switch (how) {
    case strategy::normal: return schedule(core, t);
    case strategy::express: return core->submit_express(t);
    case strategy::short_task: {
      if (core->stopping()) return t->vt->discard(t);
      worker* w = current_worker;
      if (w && w->core == core) {
        t->isolation = w->isolation.load(std::memory_order_relaxed);  // run inline: the completer's region
        return core->execute_nested(w, t);
      }
      // Any other thread, a worker of another runtime included, runs it as an outsider lent to
      // `core`: what it spawns goes to core's express lane, not to the other runtime's deque.
      runtime_core* saved = lending_core;
      lending_core = core;
      current_worker = nullptr;
      runtime_core::run(t, trace::how::successor);
      current_worker = w;
      lending_core = saved;
      return;
    }
    case strategy::asap: {
      if (core->stopping()) return t->vt->discard(t);
      asap_pool* pool;
      asap_offer* o;
      try {
        pool = &core->asap();
        o = make_record<asap_offer>(core, t);
      } catch (...) {
        // No memory or no pool thread: the express lane alone still starts it.
        return core->submit_express(t);
      }
      return o->post(*pool);
    }
  }
}

void record_successor_latency(runtime_core* core, strategy how, std::int64_t ready_ns) noexcept {
  const std::int64_t now = steady_now_ns();
  core->latency_of(current_worker)
      .at(static_cast<std::size_t>(how))
      .record(static_cast<std::uint64_t>(now > ready_ns ? now - ready_ns : 0));
}

void cancel_state::spin_pause() noexcept { sched_yield(); }

}  // namespace heddle::core_detail
