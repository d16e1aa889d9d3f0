// SPDX-License-Identifier: Apache-2.0
// The runtime's internals: workers and their threads, the shared queues, the parking lot.
#pragma once

#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "asap_pool.hpp"
#include "heddle/core/detail/service.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/runtime.hpp"
#include "latency_histogram.hpp"
#include "parking_lot.hpp"
#include "task_queue.hpp"

namespace heddle::core_detail {

struct coroutine_root;

class runtime_core {
 public:
  // `owner` is the runtime that owns this core (this_worker::runtime(), current_runtime()).
  // options.threads is at least 1.
  runtime_core(const runtime_options& options, runtime* owner);
  ~runtime_core();

  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()); }
  // Not stored here: the constructor gives it to the workers (worker::owner), where the inline
  // this_worker::runtime() reads it without runtime_core's definition. A core has a worker at least.
  runtime& owner() const noexcept { return *workers_.front()->owner; }
  runtime_stats stats() const;

  void inject(task_base* t);
  void submit_express(task_base* t);

  // Scheduling, for the worker loop (worker_main, runtime_core.cpp) and for waiters (waiting.cpp).
  task_base* find_work(worker* w);  // express, own deque, injection, then stealing
  task_base* steal_from(worker* w, worker* victim);
  task_base* steal_any(worker* w);
  // For a waiter inside heddle::isolate: a task of isolation `iso` stolen from `victim` (or any
  // worker), or nullptr. Only victims now running in `iso` are tried: their deques hold mostly tasks
  // of it. A record's tag can be read only once the record is owned (another thief may take and free
  // it meanwhile), so a stolen record of another region is requeued on the injection queue.
  task_base* steal_isolated(worker* w, worker* victim, std::uint32_t iso);
  task_base* steal_any_isolated(worker* w, std::uint32_t iso);
  // Whether some worker other than `w` running in `iso` has a non-empty deque (a racy look).
  bool isolated_work_visible(const worker* w, std::uint32_t iso) const noexcept;
  task_base* take_express() { return express_.pop(); }
  task_base* take_injected() { return injected_.pop(); }
  bool work_visible(const worker* w) const noexcept;  // a racy look at every queue
  bool express_pending() const noexcept { return express_.maybe_nonempty(); }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
  parking_lot& lot() noexcept { return lot_; }
  const runtime_options& options() const noexcept { return options_; }

  // Run a task on w and count it; w is in the task's isolation region while it runs. Two paths:
  //  - execute_from_loop, for the scheduling loop (worker_main), where w is in no region (0) between
  //    tasks: nothing to save; a task of region 0 costs no isolation store at all, one of a region
  //    is entered and left with two stores. A task that changes w's region restores it before it
  //    returns (isolation_scope, execute_nested), so w is back at 0 afterwards.
  //  - execute_nested, for a task run while another is on w's stack (a waiter helping, a successor
  //    run inline): saves the region of the code below it and restores it afterwards.
  // Traced (trace::on()), each run is recorded as a task span (trace::run_traced).
  void execute_from_loop(worker* w, task_base* t) noexcept {
    w->stats.executed.bump();
    const std::uint32_t iso = t->isolation;  // read now: t may be freed by execute
    if (iso == 0 && !trace::on()) [[likely]]
      return t->vt->execute(t);
    w->isolation.store(iso, std::memory_order_relaxed);
    run(t, trace::how::loop);
    w->isolation.store(0, std::memory_order_relaxed);
  }
  void execute_nested(worker* w, task_base* t) noexcept {
    w->stats.executed.bump();
    const std::uint32_t outer = w->isolation.load(std::memory_order_relaxed);
    w->isolation.store(t->isolation, std::memory_order_relaxed);  // read now: t may be freed by execute
    run(t, trace::how::nested);
    w->isolation.store(outer, std::memory_order_relaxed);
  }
  // Runs a record off the workers' loops (a successor on a service thread, the asap pool).
  static void run(task_base* t, trace::how h) noexcept {
    if (trace::on()) [[unlikely]]
      return trace::run_and_record(t, t->vt->execute, h);
    t->vt->execute(t);
  }

  // The services of the layers above (service.hpp), made on first use.
  runtime_service& service(unsigned id, service_factory make);
  // The auxiliary pool of strategy::asap, started on first use.
  asap_pool& asap();
  void count_asap(bool by_pool) noexcept {
    (by_pool ? asap_by_pool_ : asap_by_workers_).fetch_add(1, std::memory_order_relaxed);
  }
  // Where a successor started on the calling thread records its latency.
  latency_set& latency_of(const worker* w) noexcept {
    return w && w->core == this ? worker_latency_[w->index] : other_latency_;
  }
  latency_histogram& timer_lateness() noexcept { return timer_lateness_; }

  static constexpr unsigned max_services = 16;

  // The chains of coroutines waiting on a future with this runtime as their home (coroutine.hpp,
  // src/core/coroutines.cpp): listed while suspended, destroyed by the destructor if still there.
  // The list is striped: a chain's stripe follows from its root's address, so that suspensions and
  // resumptions on many cores take different locks and cache lines (one lock would serialise every
  // suspension of the runtime). Each call holds one stripe's spin lock.
  struct suspended_stripe;
  suspended_stripe& stripe_of(const coroutine_root* r) noexcept;
  void enlist_suspended(coroutine_root* r) noexcept;
  // `resuming`: the chain's resumption is about to be started; the stripe returned counts it until
  // its resumption_started() once it is.
  suspended_stripe& delist_suspended(coroutine_root* r, bool resuming) noexcept;

 private:
  void worker_main(worker* w);
  static void* thread_entry(void* arg);
  void start_thread(worker* w);
  void drain_discarding() noexcept;
  // Queues a tagged record on the injection queue, counts it (runtime_stats::injected) and wakes a
  // worker: inject's path, and the way back for a record an isolated waiter stole and may not run
  // (the workers still run then: nothing is drained yet).
  void push_injected(task_base* t);
  void stop_services() noexcept;
  void destroy_suspended() noexcept;

  runtime_options options_;
  // More workers than CPUs this process may run on: an idle worker's spin then yields its CPU, as
  // the worker holding the work may be waiting for it.
  bool oversubscribed_ = false;
  unsigned sequence_;  // this runtime's number, from 1, in the order runtimes are made
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<pthread_t> threads_;
  task_queue injected_;
  task_queue express_;
  parking_lot lot_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> drained_{false};
  std::atomic<std::uint64_t> injected_count_{0};
  std::atomic<std::uint64_t> express_count_{0};

  std::mutex services_m_;  // held while making a service or the pool
  std::array<std::atomic<runtime_service*>, max_services> services_{};
  std::vector<std::unique_ptr<runtime_service>> service_order_;  // in the order they were made
  std::atomic<asap_pool*> asap_{nullptr};
  std::unique_ptr<asap_pool> asap_owner_;
  std::atomic<std::uint64_t> asap_by_pool_{0};
  std::atomic<std::uint64_t> asap_by_workers_{0};
  std::unique_ptr<latency_set[]> worker_latency_;
  latency_set other_latency_;
  latency_histogram timer_lateness_;
  std::size_t stripes() const noexcept { return std::size_t{1} << (64 - stripe_shift_); }

  unsigned stripe_shift_;                          // 64 - log2(the number of stripes)
  std::unique_ptr<suspended_stripe[]> suspended_;  // a power of two of them, at least twice the workers
};

// One stripe of a runtime's suspended chains, on a cache line of its own.
struct alignas(64) runtime_core::suspended_stripe {
  spin_lock m;
  coroutine_root* head = nullptr;  // a doubly linked list, under m
  std::atomic<int> resuming{0};    // resumptions taken off this stripe and not yet started
  void resumption_started() noexcept { resuming.fetch_sub(1, std::memory_order_release); }
};

inline runtime_core::suspended_stripe& runtime_core::stripe_of(const coroutine_root* r) noexcept {
  // Fibonacci hashing of the address: roots sit in blocks of one size class, whose low bits are all
  // alike.
  const auto a = reinterpret_cast<std::uintptr_t>(r);
  return suspended_[static_cast<std::size_t>((a * 0x9E3779B97F4A7C15ull) >> stripe_shift_)];
}

}  // namespace heddle::core_detail
