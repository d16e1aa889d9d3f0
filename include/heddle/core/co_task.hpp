// SPDX-License-Identifier: Apache-2.0
// heddle::co_task<T>: C++20 coroutines whose bodies run on heddle's workers.
//
//   heddle::co_task<int> fib(int n) {
//     if (n < 2) co_return n;
//     heddle::future<int> a = heddle::spawn(fib(n - 1));  // runs in parallel, as heddle::task would
//     int b = co_await fib(n - 2);                          // runs here and now
//     co_return co_await std::move(a) + b;                  // suspends until `a` is there
//   }
//   int v = heddle::spawn(fib(30)).get();
//
// Calling a coroutine function makes its frame and runs nothing (a co_task is lazy). It runs when
//  - spawned: heddle::spawn(task) (or rt.spawn(task)) starts it as a task of the current runtime (of
//    `rt`) and returns a heddle::future<T> of its result, as heddle::task does for a function;
//  - awaited by another coroutine: `co_await task` runs it at once on the awaiting thread, and the
//    awaiting coroutine goes on when it finishes, both by symmetric transfer: a chain of co_awaits
//    a million deep uses no stack.
// A co_task that is destroyed unawaited (dropped) destroys its frame without running it.
//
// A coroutine may co_await any heddle::future<T> (a task's, a timer's, an I/O operation's, a
// promise's, a remote call's...). While it waits it holds no worker and no thread: its frame
// records where to go on, and the future's completion makes it a task again (the frame's own
// record: no allocation). It resumes on the runtime it was running on when it suspended: on the
// completing worker's deque when one of that runtime's workers completed the future (fork-join
// code), else by default_strategy (strategy.hpp), as `then` successors do;
// `co_await heddle::resume(strategy::short_task, f)` picks the strategy, and records the
// completion-to-resumption latency in the runtime's stats. `co_await std::move(f)` moves the value
// out and releases the future; `co_await f` leaves it in the future and yields a reference.
// `co_await heddle::schedule(rt)` goes on as a task of `rt` (returns at once on one of its workers).
// A future (or shared_future) done already costs no suspension: the coroutine goes on at once,
// unless tasks wait in the express lane of the worker it runs on (completions from engines and
// other threads, which that lane promises to start within a task); then it yields to them and goes
// on as a task of its worker's deque, as a `then` successor of a done future does. A loop of reads
// and writes that never block thus holds its worker for one step at a time, not for the whole loop.
//
// Exceptions leave a coroutine through whatever awaits it: co_await rethrows the awaited task's or
// future's exception unchanged; spawn's future holds it.
//
// Frames come from the runtime's block caches when they fit (512 bytes, as task records), else
// from operator new. A runtime that stops never resumes a coroutine again: one that waits in its
// queues, or is suspended on a future that is still not done once the runtime's workers and engines
// have stopped (a promise kept past the runtime), has its whole chain destroyed (every frame from
// the spawned one down, their locals' destructors run) and spawn's future failed with
// task_cancelled, as for a task that never started. A suspension on a future costs two holds of a
// spin lock for this (one stripe of the runtime's list of suspended chains, chosen by the chain's
// address, so that suspensions on different cores seldom share one); one on a shared_future also a
// small record (a relay, which the runtime can take back where a shared state's listener cannot be).
#pragma once

#include <coroutine>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/coroutine.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/shared_future.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle {

template <class T = void>
class [[nodiscard]] co_task;

namespace core_detail {

// What a coroutine that may be the outermost of its chain has: the record that its end completes.
// The outermost coroutine's result goes straight into that record; an awaited one's stays in its
// promise for the awaiting coroutine to take.
template <class T>
class outermost_base : public promise_base, public result_holder<T> {
 public:
  // The frame, with room behind it for spawn's record where its size class has it (detail/coroutine.hpp).
  static void* operator new(std::size_t bytes) { return allocate_frame(bytes, sizeof(spawn_state<T>)); }
  static void operator delete(void* frame) noexcept { free_frame(frame); }

  // Made the outermost coroutine of a chain: `s` is its record and its chain's root.
  void spawned_by(spawn_state<T>* s) noexcept { root_ = s; }
  void unhandled_exception() noexcept {
    if (awaiter_) [[likely]]
      return this->store_error(std::current_exception());
    record()->set_error(std::current_exception());
  }

 protected:
  // Called only where the coroutine is the outermost (no awaiter), whose root is its record: the
  // compiler is told it is not null, so that the conversion to the record (a second base) costs no
  // check.
  spawn_state<T>* record() const noexcept {
    if (!root_) __builtin_unreachable();
    return static_cast<spawn_state<T>*>(root_);
  }
};

template <class T>
class outermost_promise : public outermost_base<T> {
 public:
  // A T's constructor that throws leaves the body through unhandled_exception.
  template <class U>
  void return_value(U&& v) {
    if (this->awaiter_) [[likely]]
      return this->store_value(std::forward<U>(v));
    this->record()->set_value(std::forward<U>(v));
  }
};
template <>
class outermost_promise<void> : public outermost_base<void> {
 public:
  void return_void() noexcept {
    if (!awaiter_) record()->set_value();
  }
};

template <class T>
class co_promise final : public outermost_promise<T> {
 public:
  co_task<T> get_return_object() noexcept;
};

// The promise of a coroutine declared to return heddle::future<T> (the coroutine_traits below):
// it starts at once on the calling thread, as a function call does, and the future it returns is
// its record's, which its end completes. What an asynchronous acquire, or any function
// that returns a future, may be written as.
template <class T>
class future_promise final : public outermost_promise<T> {
 public:
  future<T> get_return_object() {
    auto h = std::coroutine_handle<future_promise>::from_promise(*this);
    auto* s = spawn_state<T>::make_for(h);  // throws bad_alloc before the body starts: the frame goes
    this->spawned_by(s);
    return future<T>(adopt, s, current_core());
  }
  std::suspend_never initial_suspend() noexcept { return {}; }
};

template <class T>
spawn_state<T>* spawn_record(co_task<T>& task);

}  // namespace core_detail

template <class T>
class [[nodiscard]] co_task {
  static_assert(!std::is_reference_v<T>,
                "heddle::co_task<T>: T is a value type (a coroutine's result outlives its frame)");

 public:
  using promise_type = core_detail::co_promise<T>;
  using value_type = T;

  co_task() noexcept = default;
  co_task(co_task&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  co_task& operator=(co_task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~co_task() { reset(); }

  // True until the task is moved from, or spawned. Not thread-safe: a co_task is its holder's, as
  // a future is (any thread, one at a time).
  bool valid() const noexcept { return static_cast<bool>(h_); }

  // Runs the task on this thread now; the awaiting coroutine goes on with its result (or its
  // exception) when it finishes. Costs no allocation beyond the frame made at the call. Inside a
  // heddle coroutine only (its holder's call).
  auto operator co_await() && noexcept { return core_detail::task_awaiter<T>(h_); }

 private:
  friend class core_detail::co_promise<T>;
  template <class U>
  friend core_detail::spawn_state<U>* core_detail::spawn_record(co_task<U>& task);

  explicit co_task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  void reset() noexcept {
    if (h_) std::exchange(h_, nullptr).destroy();
  }

  std::coroutine_handle<promise_type> h_;
};

template <class T>
co_task<T> core_detail::co_promise<T>::get_return_object() noexcept {
  return co_task<T>(std::coroutine_handle<co_promise>::from_promise(*this));
}

namespace core_detail {
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_empty_co_task() {
  throw invalid_future("heddle::spawn: an empty co_task (moved from, or spawned already)");
}

// The record of `task`'s future, which the task gives its frame to. Throws invalid_future for an
// empty task, bad_alloc (the frame destroyed) where the record cannot be had.
template <class T>
[[gnu::always_inline]] inline spawn_state<T>* spawn_record(co_task<T>& task) {
  if (!task.valid()) [[unlikely]]
    throw_empty_co_task();
  auto h = std::exchange(task.h_, nullptr);
  spawn_state<T>* s = nullptr;
  try {
    s = spawn_state<T>::make_for(h);
  } catch (...) {
    h.destroy();
    throw;
  }
  h.promise().spawned_by(s);
  return s;
}
}  // namespace core_detail

// Starts `task` as a task of `core`: on the calling worker's deque when it is one of core's
// workers, else injected. Throws invalid_future for an empty task. Inlined: a spawn is a few dozen
// instructions, and a call would add its own. Thread-safe (the task is the caller's); never waits.
template <class T>
[[gnu::always_inline]] inline future<T> spawn_on(core_detail::runtime_core* core, co_task<T> task) {
  core_detail::spawn_state<T>* s = core_detail::spawn_record(task);
  core_detail::schedule(core, s);
  return future<T>(core_detail::adopt, s, core);
}

// Starts `task` on the calling worker's runtime (its deque), or on the current runtime
// (current_runtime()) from any other thread; the future holds its result or exception. Costs a
// record beyond the task's frame, in the frame's block where it has room (a frame of up to 368
// bytes, for a small T), else from the block caches. Throws invalid_future for an empty task.
// Thread-safe (the task is the caller's); never waits: any thread.
template <class T>
[[gnu::always_inline]] inline future<T> spawn(co_task<T> task) {
  core_detail::worker* w = core_detail::current_worker;
  if (!w) [[unlikely]]
    return spawn_on(core_detail::current_core(), std::move(task));
  core_detail::spawn_state<T>* s = core_detail::spawn_record(task);
  core_detail::spawn_local(w, s);
  return future<T>(core_detail::adopt, s, w->core);
}

// The same on `rt`. Thread-safe; never waits.
template <class T>
future<T> runtime::spawn(co_task<T> task) {
  return spawn_on(core_.get(), std::move(task));
}

// co_await of a future: see the top of this file. Inside a heddle coroutine (co_task, or a function
// returning future<T>); the future is the coroutine's, as any future's calls are its holder's.
template <class T>
auto operator co_await(future<T>&& f) {
  core_detail::future_state<T>* s = core_detail::access::state_of(std::move(f));
  if (!s) throw invalid_future("heddle: co_await of a future without state");
  return core_detail::future_awaiter<T, /*Owned=*/true>(s, strategy::normal, /*timed=*/false);
}
template <class T>
auto operator co_await(future<T>& f) {
  core_detail::future_state<T>* s = core_detail::access::peek(f);
  if (!s) throw invalid_future("heddle: co_await of a future without state");
  return core_detail::future_awaiter<T, /*Owned=*/false>(s, strategy::normal, /*timed=*/false);
}

// co_await of a shared_future: any number of coroutines (and threads) may wait on copies at once.
// `co_await sf` yields a const reference to the value, which lives as long as `sf`; `co_await
// std::move(sf)` (or of a temporary) a copy. A stored exception is rethrown in every awaiter.
// Thread-safe (own copy, as shared_future's calls).
template <class T>
auto operator co_await(const shared_future<T>& f) {
  core_detail::shared_state<T>* s = core_detail::access::shared_state_of(f);
  if (!s) throw invalid_future("heddle: co_await of a shared_future without state");
  return core_detail::shared_awaiter<T, /*Owned=*/false>(s, strategy::normal, /*timed=*/false);
}
template <class T>
auto operator co_await(shared_future<T>&& f) {
  core_detail::shared_state<T>* s = core_detail::access::shared_state_of(f);
  if (!s) throw invalid_future("heddle: co_await of a shared_future without state");
  return core_detail::shared_awaiter<T, /*Owned=*/true>(s, strategy::normal, /*timed=*/false);
}

// co_await heddle::resume(how, f): as co_await std::move(f), resumed by `how` once `f` is ready,
// with the latency from completion to resumption recorded in the runtime's stats. Inside a heddle
// coroutine, as co_await of a future.
template <class T>
auto resume(strategy how, future<T> f) {
  core_detail::future_state<T>* s = core_detail::access::state_of(std::move(f));
  if (!s) throw invalid_future("heddle::resume: a future without state");
  return core_detail::future_awaiter<T, /*Owned=*/true>(s, how, /*timed=*/true);
}

// co_await heddle::schedule(rt): the coroutine goes on as a task of `rt` (at once, without
// suspending, on one of its workers). Inside a heddle coroutine; thread-safe.
inline core_detail::schedule_awaiter schedule(runtime& rt) noexcept {
  return core_detail::schedule_awaiter(core_detail::access::core_of(rt));
}

}  // namespace heddle

// A function declared to return heddle::future<T> may be a coroutine (co_await in its body): it
// runs on the calling thread up to its first suspension, and its future completes with what it
// co_returns (or the exception that leaves it). Its chain is rooted as a spawned one's.
template <class T, class... Args>
struct std::coroutine_traits<heddle::future<T>, Args...> {
  using promise_type = heddle::core_detail::future_promise<T>;
};
