// SPDX-License-Identifier: Apache-2.0
// heddle::runtime: a pool of workers with work-stealing deques, an injection queue for submissions
// from other threads, and an express lane that every worker looks at between tasks.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/stats.hpp"

namespace heddle {

struct runtime_options {
  // Workers; 0 means default_thread_count().
  unsigned threads = 0;
  // How long an idle worker keeps looking for work before it sleeps in the kernel. Waking a
  // sleeping thread takes a system call and the kernel's scheduler, so a short spin pays for bursts
  // of submissions.
  std::chrono::nanoseconds spin_before_park = std::chrono::microseconds(50);
  // Stack of each worker thread. Helping while waiting never takes unrelated work when less than
  // a quarter of it is left.
  std::size_t stack_bytes = std::size_t{8} << 20;
  // Threads of the auxiliary pool that races the workers for strategy::asap successors; started
  // on the first such successor.
  unsigned asap_threads = 1;
};

// HEDDLE_NUM_THREADS if set (a positive integer, else configuration_error), or the number of cores.
// Thread-safe (while nobody changes the environment).
HEDDLE_EXPORT unsigned default_thread_count();

template <class T>
class co_task;

// Thread safety: every call on a runtime is thread-safe, from any thread (each says what it waits
// for), except its destruction (below).
class HEDDLE_EXPORT runtime {
 public:
  // Starts the workers. Thread-safe (runtimes are independent); throws configuration_error.
  runtime() : runtime(runtime_options{}) {}
  explicit runtime(unsigned threads) : runtime(runtime_options{.threads = threads}) {}
  explicit runtime(const runtime_options& options);
  // Stops the workers once the tasks they are running return. Tasks that never started are
  // discarded: their futures fail with task_cancelled. Never waits for queued work. Not
  // thread-safe: the owner's call, once no other thread submits to the runtime; blocks until the
  // running tasks return. A misuse, which ends the process ("heddle: misuse"): destroying the
  // runtime from one of its own tasks.
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Runs std::invoke(f, args...) as a task on this runtime; arguments are copied or moved in.
  // Thread-safe; never waits: any thread, its tasks included.
  template <class F, class... A>
  auto task(F&& f, A&&... args);
  // Starts a coroutine as a task of this runtime; the future holds its result (co_task.hpp).
  // Thread-safe; never waits.
  template <class T>
  future<T> spawn(co_task<T> task);

  // Runs f() on the calling thread with this runtime as its current runtime, and returns what f
  // returns (exceptions propagate). Inside f, the calls that pick the current runtime use this one:
  // heddle::task, task_group(), the algorithms without a runtime argument, the async layer's calls
  // without one, heddle::current_runtime(). Calls nest; each restores the previous current runtime
  // on exit, by exception too. Spelled as oneTBB's task_arena::execute.
  //  - On one of this runtime's workers: just f().
  //  - On any other thread, a worker of another runtime included: for the duration of f the thread
  //    is no worker (this_worker::index() is -1); what f spawns is injected into this runtime, and
  //    what f waits for (a future, a task group, an algorithm) it sleeps on, as a thread outside the
  //    runtime does: it runs no task meanwhile, of either runtime. A worker of another runtime that
  //    waits here for work that only its own runtime's deque holds (work it spawned before calling
  //    execute) relies on that runtime's other workers to take it: with one worker, that never
  //    happens.
  // Costs four thread-local saves and restores beyond f. The thread's isolation region
  // (heddle::isolate) carries into f. Thread-safe: any thread, for itself; blocks while f runs.
  template <class F>
  decltype(auto) execute(F&& f);

  // The number of workers. Thread-safe.
  unsigned num_threads() const noexcept;
  // The counters now, summed over the workers (relaxed reads: a running runtime's are a moment's
  // approximation). Thread-safe.
  runtime_stats stats() const;

 private:
  friend struct core_detail::access;  // core_of: for the layers built on the core

  struct core_deleter {
    void operator()(core_detail::runtime_core*) const noexcept;
  };
  std::unique_ptr<core_detail::runtime_core, core_deleter> core_;
};

// The runtime that heddle::task and friends use outside any worker; started on first use with
// default_thread_count() workers and stopped at exit. Thread-safe (the first call starts it; it
// throws configuration_error, and a later call tries again).
HEDDLE_EXPORT runtime& default_runtime();

// The runtime that calls without an explicit one use on this thread: the calling worker's runtime;
// else the runtime a service thread runs a successor for; else the innermost runtime entered with
// runtime::execute; else default_runtime() (started on first use: may throw configuration_error).
// Thread-safe: answers for the calling thread.
HEDDLE_EXPORT runtime& current_runtime();

namespace core_detail {

template <class F, class... A>
using task_value_t = std::remove_cvref_t<std::invoke_result_t<std::decay_t<F>, std::decay_t<A>...>>;

template <class F, class... A>
auto make_task(F&& f, A&&... args) {
  using T = task_value_t<F, A...>;
  using S = task_state<T, std::decay_t<F>, std::decay_t<A>...>;
  return make_record<S>(std::forward<F>(f), std::forward<A>(args)...);
}

}  // namespace core_detail

template <class F, class... A>
auto runtime::task(F&& f, A&&... args) {
  auto* s = core_detail::make_task(std::forward<F>(f), std::forward<A>(args)...);
  core_detail::schedule(core_.get(), s);
  return future<core_detail::task_value_t<F, A...>>(core_detail::adopt, s, core_.get());
}

template <class F>
decltype(auto) runtime::execute(F&& f) {
  core_detail::worker* w = core_detail::current_worker;
  if (w && w->core == core_.get()) return std::invoke(std::forward<F>(f));
  core_detail::entered_scope scope(core_.get());
  return std::invoke(std::forward<F>(f));
}

// Runs std::invoke(f, args...) as a task: on the calling worker's runtime, or on the current
// runtime (current_runtime()) from any other thread. A member function takes the object pointer
// first, as in heddle::task(&matrix::row_sum, &m, i). Thread-safe; never waits: any thread.
template <class F, class... A>
auto task(F&& f, A&&... args) {
  core_detail::worker* w = core_detail::current_worker;
  // Outside the workers, find (or start) the default runtime before making the record: starting
  // it may fail (a bad HEDDLE_NUM_THREADS), and then nothing must have been allocated.
  core_detail::runtime_core* outside = w ? nullptr : core_detail::current_core();
  auto* s = core_detail::make_task(std::forward<F>(f), std::forward<A>(args)...);
  if (w) [[likely]] {
    core_detail::spawn_local(w, s);
    return future<core_detail::task_value_t<F, A...>>(core_detail::adopt, s, w->core);
  }
  core_detail::schedule(outside, s);
  return future<core_detail::task_value_t<F, A...>>(core_detail::adopt, s, outside);
}

}  // namespace heddle
