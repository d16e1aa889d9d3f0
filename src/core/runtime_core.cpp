// SPDX-License-Identifier: Apache-2.0
// Starting and stopping workers, the shared queues, and the idle loop of a worker.
#include "runtime_core.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <exception>
#include <system_error>
#include <thread>

#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/futex.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/per_worker.hpp"
#include "heddle/core/trace.hpp"

namespace heddle::core_detail {

HEDDLE_FAST_TLS_DEFINITION(worker*, current_worker);
HEDDLE_FAST_TLS_DEFINITION(runtime_core*, lending_core);
HEDDLE_FAST_TLS_DEFINITION(runtime_core*, entered_core);
HEDDLE_FAST_TLS_DEFINITION(std::uint32_t, outside_isolation);
HEDDLE_FAST_TLS_DEFINITION(std::uint64_t, thread_serial);

namespace {

// Marsaglia's xorshift: victim selection needs speed, not quality.
std::uint32_t next_random(std::uint32_t& s) noexcept {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

thread_local std::uint32_t random_state = 0x9e3779b9u;

// The CPUs this process may run on (its affinity mask), or the machine's count if unknown.
unsigned usable_cpus() noexcept {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

// Runtimes are numbered in the order they are made, from 1: the trace names the workers of the
// first "worker N", those of a later one "runtime R worker N".
unsigned next_sequence() noexcept {
  static std::atomic<unsigned> made{0};
  return made.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

runtime_core::runtime_core(const runtime_options& options, runtime* owner)
    : options_(options),
      oversubscribed_(options.threads > usable_cpus()),
      sequence_(next_sequence()),
      lot_(options.threads),
      worker_latency_(new latency_set[options.threads]),
      stripe_shift_(64 - static_cast<unsigned>(std::countr_zero(std::bit_ceil(2 * std::max(1u, options.threads))))),
      suspended_(new suspended_stripe[stripes()]) {
  workers_.reserve(options.threads);
  for (unsigned i = 0; i < options.threads; ++i) {
    auto w = std::make_unique<worker>();
    w->core = this;
    w->sleepers = &lot_.sleepers;
    w->express_waiting = express_.size_word();
    w->index = i;
    w->owner = owner;
    w->waiter.owner = w.get();
    w->waiter.ready = [](continuation* c) noexcept {
      auto* node = static_cast<worker_wake_node*>(c);
      parking_lot::wake(node->owner);
      node->attached.fetch_sub(1, std::memory_order_release);  // the last touch (~runtime_core)
    };
    workers_.push_back(std::move(w));
  }
  threads_.reserve(options.threads);
  try {
    for (auto& w : workers_) start_thread(w.get());
  } catch (...) {
    stopping_.store(true, std::memory_order_release);
    lot_.wake_all();
    for (pthread_t t : threads_) pthread_join(t, nullptr);
    throw;
  }
}

void runtime_core::start_thread(worker* w) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, options_.stack_bytes);
  pthread_t t;
  const int rc = pthread_create(&t, &attr, &thread_entry, w);
  pthread_attr_destroy(&attr);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "heddle: cannot start a worker thread");
  threads_.push_back(t);
}

void* runtime_core::thread_entry(void* arg) {
  auto* w = static_cast<worker*>(arg);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* lowest = nullptr;
    std::size_t size = 0;
    pthread_attr_getstack(&attr, &lowest, &size);
    pthread_attr_destroy(&attr);
    w->stack_limit = reinterpret_cast<std::uintptr_t>(lowest) + size / 4;
  }
  random_state = 0x9e3779b9u * (w->index + 1);
  const unsigned seq = w->core->sequence_;
  heddle::trace::set_thread_name((seq == 1 ? "worker " : "runtime " + std::to_string(seq) + " worker ") +
                                 std::to_string(w->index));
  current_worker = w;
  w->core->worker_main(w);
  current_worker = nullptr;
  return nullptr;
}

runtime_core::~runtime_core() {
  if (worker* w = current_worker; w && w->core == this) {
    fatal_misuse("a runtime cannot be destroyed by one of its own tasks", "heddle::runtime::~runtime");
  }
  stopping_.store(true, std::memory_order_seq_cst);
  lot_.wake_all();
  for (pthread_t t : threads_) pthread_join(t, nullptr);
  stop_services();
  drain_discarding();
  destroy_suspended();
  // A resumption the sweep waited for may have been queued just after the first drain (inject saw
  // drained_ unset): discarded here.
  drain_discarding();
  // Every wait of a worker ended with its future done, but the completer, on a thread this runtime
  // does not own, may still be inside the wake (worker_wake_node): the workers are freed after it.
  for (auto& w : workers_)
    for (unsigned n = 1; w->waiter.attached.load(std::memory_order_acquire) != 0; ++n) spin_pause(n);
}

// With the workers gone: the engines cancel what is pending (successors then land in the queues
// and are discarded below), and the asap pool exits.
// Not under services_m_: a service thread may be completing an operation whose successor asks for
// the asap pool (runtime_core::asap takes the lock), and stop() joins that thread. Once stopping,
// neither service() nor asap() makes anything new, so the list no longer changes.
void runtime_core::stop_services() noexcept {
  {
    std::lock_guard lock(services_m_);  // orders this after any service or pool still being made
  }
  for (auto it = service_order_.rbegin(); it != service_order_.rend(); ++it) (*it)->stop();
  if (asap_owner_) asap_owner_->stop();
}

runtime_service& runtime_core::service(unsigned id, service_factory make) {
  // new_service_id() hands out at most max_services
  if (id >= max_services) fatal_internal("a service id past the table's end", "heddle::core_detail::service");
  if (runtime_service* s = services_[id].load(std::memory_order_acquire)) [[likely]]
    return *s;
  std::lock_guard lock(services_m_);
  if (runtime_service* s = services_[id].load(std::memory_order_acquire)) return *s;
  if (stopping()) throw task_cancelled("heddle: the runtime is stopping; it starts no more operations");
  std::unique_ptr<runtime_service> made = make(this);
  runtime_service* s = made.get();
  service_order_.push_back(std::move(made));
  services_[id].store(s, std::memory_order_release);
  return *s;
}

asap_pool& runtime_core::asap() {
  if (asap_pool* p = asap_.load(std::memory_order_acquire)) [[likely]]
    return *p;
  std::lock_guard lock(services_m_);
  if (asap_pool* p = asap_.load(std::memory_order_acquire)) return *p;
  if (stopping()) throw task_cancelled("heddle: the runtime is stopping; it starts no asap pool");
  asap_owner_ = std::make_unique<asap_pool>(this, std::max(1u, options_.asap_threads), options_.stack_bytes);
  asap_.store(asap_owner_.get(), std::memory_order_release);
  return *asap_owner_;
}

// After the workers are gone: every record still queued completes as cancelled. Discarding can
// queue more (a continuation of a discarded task), hence the loop.
void runtime_core::drain_discarding() noexcept {
  for (;;) {
    task_base* t = express_.pop();
    if (!t) t = injected_.pop();
    for (std::size_t i = 0; !t && i < workers_.size(); ++i) t = workers_[i]->deque.pop();
    if (!t) break;
    t->vt->discard(t);
  }
  drained_.store(true, std::memory_order_release);
}

void runtime_core::inject(task_base* t) {
  if (drained_.load(std::memory_order_acquire)) [[unlikely]] {
    t->vt->discard(t);
    return;
  }
  t->isolation = current_isolation();
  push_injected(t);
}

void runtime_core::push_injected(task_base* t) {
  injected_.push(t);
  injected_count_.fetch_add(1, std::memory_order_relaxed);
  lot_.wake_one(/*published=*/true);
}

void runtime_core::submit_express(task_base* t) {
  if (drained_.load(std::memory_order_acquire)) [[unlikely]] {
    t->vt->discard(t);
    return;
  }
  t->isolation = current_isolation();
  express_.push(t);
  express_count_.fetch_add(1, std::memory_order_relaxed);
  lot_.wake_one(/*published=*/true);
}

task_base* runtime_core::steal_from(worker* w, worker* victim) {
  task_base* t = nullptr;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto r = victim->deque.steal(t);
    if (r == work_stealing_deque::steal_result::success) {
      t->thief.store(w, std::memory_order_relaxed);
      t->trace_tag = victim->index;  // the trace's stolen_from (trace::run_traced)
      w->stats.steals.bump();
      return t;
    }
    w->stats.failed_steals.bump();
    if (r == work_stealing_deque::steal_result::empty) break;
  }
  return nullptr;
}

task_base* runtime_core::steal_any(worker* w) {
  const auto n = static_cast<std::uint32_t>(workers_.size());
  if (n < 2) return nullptr;
  const std::uint32_t start = next_random(random_state) % n;
  for (std::uint32_t k = 0; k < n; ++k) {
    worker* v = workers_[(start + k) % n].get();
    if (v == w || v->deque.looks_empty()) continue;
    if (task_base* t = steal_from(w, v)) return t;
  }
  return nullptr;
}

task_base* runtime_core::steal_isolated(worker* w, worker* victim, std::uint32_t iso) {
  if (victim == w || victim->isolation.load(std::memory_order_relaxed) != iso || victim->deque.looks_empty())
    return nullptr;
  task_base* t = steal_from(w, victim);
  if (!t || t->isolation == iso) return t;
  // Not ours to run: back to the runtime, untagged anew (it keeps its own region). Its waiters'
  // leapfrogging must not aim at this worker, which never ran it.
  t->thief.store(nullptr, std::memory_order_relaxed);
  w->stats.isolation_requeues.bump();
  push_injected(t);
  return nullptr;
}

task_base* runtime_core::steal_any_isolated(worker* w, std::uint32_t iso) {
  const auto n = static_cast<std::uint32_t>(workers_.size());
  if (n < 2) return nullptr;
  const std::uint32_t start = next_random(random_state) % n;
  for (std::uint32_t k = 0; k < n; ++k)
    if (task_base* t = steal_isolated(w, workers_[(start + k) % n].get(), iso)) return t;
  return nullptr;
}

bool runtime_core::isolated_work_visible(const worker* w, std::uint32_t iso) const noexcept {
  for (auto& v : workers_)
    if (v.get() != w && v->isolation.load(std::memory_order_relaxed) == iso && !v->deque.looks_empty()) return true;
  return false;
}

task_base* runtime_core::find_work(worker* w) {
  if (express_.maybe_nonempty())
    if (task_base* t = express_.pop()) return t;
  if (task_base* t = w->deque.pop()) return t;
  if (task_base* t = injected_.pop()) return t;
  return steal_any(w);
}

bool runtime_core::work_visible(const worker* w) const noexcept {
  if (express_.maybe_nonempty() || injected_.maybe_nonempty() || !w->deque.looks_empty()) return true;
  for (auto& v : workers_)
    if (!v->deque.looks_empty()) return true;
  return false;
}

void runtime_core::worker_main(worker* w) {
  bool spin = true;
  for (;;) {
    task_base* t = find_work(w);
    if (!t && !stopping() && spin) {
      // Spin a little before sleeping: waking a sleeping thread costs far more than a short spin.
      // Oversubscribed, the spin yields. Measured with 4 workers on 2 cores (heat 4096x1024x100):
      // 207 ms spinning, 178 ms yielding.
      spin_then_park spinner(options_.spin_before_park, /*yield_core=*/oversubscribed_);
      const std::uint64_t searched_from = trace::on() ? trace::now() : 0;
      while (!t && !stopping() && spinner.keep_spinning())
        if (work_visible(w)) t = find_work(w);
      if (searched_from) trace::emit_span(trace::kind::search, searched_from, trace::now());
    }
    if (t) {
      // Stopping: what no running task waits for is discarded, never run.
      if (stopping()) [[unlikely]]
        t->vt->discard(t);
      else execute_from_loop(w, t);
      spin = true;
      continue;
    }
    if (stopping()) return;
    // After a sleep that timed out with nothing to do, sleep again without spinning first.
    spin = lot_.park(w, parking_lot::sleeper_kind::idle, [&] { return stopping() || work_visible(w); }) !=
           parking_lot::wake_reason::timed_out;
  }
}

runtime_stats runtime_core::stats() const {
  runtime_stats s;
  s.workers = size();
  for (auto& w : workers_) {
    s.spawned += w->stats.spawned.get();
    s.executed += w->stats.executed.get();
    s.steals += w->stats.steals.get();
    s.failed_steals += w->stats.failed_steals.get();
    s.parks += w->stats.parks.get();
    s.isolation_requeues += w->stats.isolation_requeues.get();
  }
  s.wakeups = lot_.wakeups.load(std::memory_order_relaxed);
  s.lost_wakeups = lot_.lost_wakeups.load(std::memory_order_relaxed);
  s.injected = injected_count_.load(std::memory_order_relaxed);
  s.express = express_count_.load(std::memory_order_relaxed);
  s.asap_by_pool = asap_by_pool_.load(std::memory_order_relaxed);
  s.asap_by_workers = asap_by_workers_.load(std::memory_order_relaxed);
  for (std::size_t k = 0; k < strategy_count; ++k) {
    latency_histogram::merged m;
    for (unsigned i = 0; i < size(); ++i) m.add(worker_latency_[i][k]);
    m.add(other_latency_[k]);
    s.successor_latency[k] = m.summary();
  }
  latency_histogram::merged lateness;
  lateness.add(timer_lateness_);
  s.timer_lateness = lateness.summary();
  return s;
}

}  // namespace heddle::core_detail
