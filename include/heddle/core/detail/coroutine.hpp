// SPDX-License-Identifier: Apache-2.0
// The machinery behind heddle::co_task (co_task.hpp): where frames live, the promise, the record that
// a spawned coroutine completes, and the records that resume a suspended coroutine on a runtime.
#pragma once

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/block_cache.hpp"
#include "heddle/core/detail/chain_state.hpp"
#include "heddle/core/detail/continuation_state.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/shared_state.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::core_detail {

// A coroutine's frame comes from the block caches when it fits a size class (512 bytes) with its
// header, as task records do; larger frames come from operator new. The header (16 bytes before
// the frame) keeps the block's size class and where in the block a spawn's record has room (both
// taken at the allocation, where the frame's size is the compiler's constant): spawn puts its
// record in the block's unused tail, so that a spawned coroutine costs one block, as a task does.
// A block that holds such a record outlives the frame: the record frees it (free_frame_block) once
// the future lets it go. A spawned coroutine's end does not suspend: the frame is destroyed where
// the body ends (no second entry into the coroutine), and its deallocation completes the record
// the header names, after every local's destructor has run.
// Every frame spawn can be given has one: a frame whose allocation the compiler elided (clang's
// heap elision, for a coroutine awaited in place) never reaches spawn, as spawn's record takes its
// handle out of the awaiting coroutine's reach, which rules the elision out.
struct frame_header {
  std::uint8_t size_class;       // the block's (num_size_classes: operator new's)
  std::uint8_t holds_record;     // the block's tail holds spawn's record: the frame's end leaves it
  std::uint16_t unused;          // zero: the first word is then one constant, stored at once
  std::uint32_t record_room;     // the offset in the block where spawn's record fits; 0: it does not
  future_state_base* completes;  // spawn's record, once the frame's end is to complete it
};
inline constexpr std::size_t frame_header_bytes = 16;
static_assert(sizeof(frame_header) == frame_header_bytes, "a frame's header is 16 bytes (the frame's alignment)");

inline frame_header* header_of(void* frame) noexcept {
  return reinterpret_cast<frame_header*>(static_cast<std::byte*>(frame) - frame_header_bytes);
}

// Frees the block that holds a frame, by the size class its header keeps: on a worker, into its
// cache with no call (the block caches' own slow paths are tail calls); else out of line.
HEDDLE_EXPORT void free_frame_block_outside(frame_header* block) noexcept;
inline void free_frame_block(frame_header* block) noexcept {
  const std::size_t cls = block->size_class;
  worker* w = current_worker;
  if (cls < num_size_classes && w) [[likely]]
    return w->cache.deallocate(block, cls);
  free_frame_block_outside(block);
}

// A frame of `bytes`, with room behind it for a record of `record_bytes` where the size class has
// it. Inlined into a coroutine's ramp, where both sizes are constants: the class and the room fold.
[[gnu::always_inline]] inline void* allocate_frame(std::size_t bytes, std::size_t record_bytes) {
  const std::size_t used = bytes + frame_header_bytes, cls = size_class_of(used);
  const std::size_t at = (used + block_align - 1) / block_align * block_align;
  const bool room = cls < num_size_classes && at + record_bytes <= class_bytes(cls);
  void* block = cls < num_size_classes ? allocate_block(cls) : ::operator new(used);
  ::new (block) frame_header{static_cast<std::uint8_t>(cls), 0, 0, static_cast<std::uint32_t>(room ? at : 0), nullptr};
  return static_cast<std::byte*>(block) + frame_header_bytes;
}

// The end of a frame: its block freed unless spawn's record lives there, and that record completed
// if the frame's end is to complete it (a spawned coroutine's body ended); a chain destroyed instead
// completes its record itself. The flags are read first: a completed record may be freed at once,
// and its block with it. Owned: the record's awaiter runs it here (worker::owned_run) and nobody
// else can be attached to it yet, so a plain store completes it.
inline void free_frame(void* frame) noexcept {
  frame_header* h = header_of(frame);
  future_state_base* s = h->completes;
  if (!h->holds_record) free_frame_block(h);
  if (!s) return;
  worker* w = current_worker;
  if (w && w->owned_run == s) s->complete_owned();
  else s->complete();
}

// The root of a chain of coroutines that spawn() started (or a coroutine returning a future): the
// outermost frame (the spawned coroutine's, which completes the future at its end) and what
// destroys the chain instead of resuming it (a runtime stopping while a coroutine of the chain waits
// to be resumed). Destroying the outermost frame destroys, through its locals, every frame it awaits.
// While one of the chain's coroutines waits on a future (co_await of a future), the root is in its
// home runtime's list of suspended chains, with the state it waits on and the continuation it
// attached there: a runtime that stops detaches the continuation and destroys the chain, so that no
// frame outlives the runtime that would have resumed it.
struct coroutine_root {
  explicit coroutine_root(void (*abandon_fn)(coroutine_root*) noexcept) noexcept : abandon(abandon_fn) {}

  std::coroutine_handle<> top;
  void (*abandon)(coroutine_root*) noexcept;
  // Written when listed (enlist_suspended), read only while listed: left uninitialised before, as
  // a spawn that never suspends never lists its chain. What the chain waits on and what it attached
  // there, and how to take that back (true if taken: whoever completes what it waits on will not
  // resume it; false if a completion got there first).
  void* awaited;
  continuation* waiter;
  bool (*detach)(coroutine_root*) noexcept;
  coroutine_root* prev;  // the list's links (src/core/coroutines.cpp)
  coroutine_root* next;
};

// Lists `r` as waiting on `awaited` through `waiter` (taken back by `detach`), in `core`'s list:
// before the continuation is attached, so that its completion always finds it listed. One spin
// lock's hold.
HEDDLE_EXPORT void enlist_suspended(runtime_core* core, coroutine_root* r, void* awaited, continuation* waiter,
                                    bool (*detach)(coroutine_root*) noexcept) noexcept;
// `detach` for a continuation attached to a future's state (`awaited`): puts the state back to
// pending if `waiter` is still what it holds.
inline bool detach_from_future(coroutine_root* r) noexcept {
  auto expected = reinterpret_cast<std::uintptr_t>(r->waiter);
  return static_cast<future_state_base*>(r->awaited)
      ->state.compare_exchange_strong(expected, future_state_base::pending, std::memory_order_acq_rel);
}
// Takes `r` off the list when the state was done already at the attach. One spin lock's hold.
HEDDLE_EXPORT void delist_suspended(runtime_core* core, coroutine_root* r) noexcept;
// The awaited state completed: takes `r` off the list and starts `t` (which resumes the chain) by
// `start`, `core` counting the start in flight until it is made, so that a runtime that stops
// outlives every start its list began. One spin lock's hold and an atomic decrement.
HEDDLE_EXPORT void resume_suspended(runtime_core* core, coroutine_root* r, successor_start& start,
                                    task_base* t) noexcept;

// Whether a promise belongs to a chain heddle started (it can name its root).
template <class P>
concept rooted_promise = requires(const P& p) {
  { p.root() } -> std::same_as<coroutine_root*>;
};

// What every co_task's promise has, whatever its result: the coroutine that awaits it (resumed by
// symmetric transfer when it finishes; none for a spawned one, which completes spawn's record
// instead), and the root of its chain. Its frame's allocation is its result's promise's
// (outermost_base, co_task.hpp), which knows the size of spawn's record.
class promise_base {
 public:
  std::suspend_always initial_suspend() noexcept { return {}; }  // lazy: started by co_await or spawn

  // An awaited co_task suspends at its end and the awaiting coroutine goes on by symmetric
  // transfer (it destroys this frame with its co_task). A spawned one (the outermost of its chain)
  // does not suspend: its frame is destroyed there and then, its parameters' and locals'
  // destructors run, and the frame's deallocation completes spawn's record (free_frame); the
  // thread goes back to whatever resumed the chain.
  struct final_awaiter {
    std::coroutine_handle<> awaiter;
    bool await_ready() const noexcept { return !awaiter; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<>) const noexcept { return awaiter; }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {awaiter_}; }

  coroutine_root* root() const noexcept { return root_; }

 protected:
  template <class>
  friend class task_awaiter;

  std::coroutine_handle<> awaiter_;  // null for the spawned one
  coroutine_root* root_ = nullptr;   // for the spawned one: spawn's record
};

// A co_task<T>'s promise: the result, a value or the exception that left the body.
template <class T>
class co_promise;

template <class T>
class result_holder {
 public:
  result_holder() noexcept {}
  result_holder(const result_holder&) = delete;
  ~result_holder() {
    if (kind_ == result_kind::value) value_.~T();
    else if (kind_ == result_kind::error) error_.~exception_ptr();
  }
  void store_error(std::exception_ptr e) noexcept {
    ::new (static_cast<void*>(std::addressof(error_))) std::exception_ptr(std::move(e));
    kind_ = result_kind::error;
  }
  template <class U>
  void store_value(U&& v) {
    ::new (static_cast<void*>(std::addressof(value_))) T(std::forward<U>(v));
    kind_ = result_kind::value;
  }
  // The value moved out, or the body's exception rethrown.
  T take() {
    if (kind_ == result_kind::error) [[unlikely]]
      std::rethrow_exception(error_);
    return std::move(value_);
  }

 private:
  // A union and its kind, as a future's state holds its result: what std::variant would do, with
  // no valueless state to check for at each access.
  union {
    T value_;
    std::exception_ptr error_;
  };
  result_kind kind_ = result_kind::none;
};

template <>
class result_holder<void> {
 public:
  void store_error(std::exception_ptr e) noexcept { error_ = std::move(e); }
  void take() {
    if (error_) std::rethrow_exception(std::move(error_));
  }

 private:
  std::exception_ptr error_;
};

// co_await of a co_task: the awaited coroutine starts now, on this thread, by symmetric transfer
// (no stack grows however deep the chain), and resumes the awaiting one the same way when done.
template <class T>
class task_awaiter {
 public:
  explicit task_awaiter(std::coroutine_handle<co_promise<T>> h) noexcept : h_(h) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<P> awaiting) noexcept {
    promise_base& child = h_.promise();
    child.awaiter_ = awaiting;
    if constexpr (rooted_promise<P>) child.root_ = awaiting.promise().root();
    return h_;
  }
  T await_resume() { return h_.promise().take(); }

 private:
  std::coroutine_handle<co_promise<T>> h_;
};

// The task record that resumes a coroutine on a runtime once what it awaits is there. It lives in
// the suspended coroutine's frame (an awaiter's member): resuming costs no allocation. Discarded by
// a stopping runtime, it never resumes the coroutine: it destroys the coroutine's chain from its
// root (a coroutine that heddle did not start, with no root, is destroyed alone).
class resumer : public task_base {
 public:
  resumer() noexcept : task_base(&vtable) {}
  // Records where to resume and what to destroy if that never happens.
  template <class P>
  void prepare(std::coroutine_handle<P> h) noexcept {
    h_ = h;
    if constexpr (rooted_promise<P>) root_ = h.promise().root();
  }

 protected:
  explicit resumer(const task_vtable* v) noexcept : task_base(v) {}
  coroutine_root* root() const noexcept { return root_; }
  void resume_now() const { h_.resume(); }
  static void discard(task_base* t) noexcept {
    auto* r = static_cast<resumer*>(t);
    if (coroutine_root* root = r->root_) return root->abandon(root);
    r->h_.destroy();
  }

 private:
  static void execute(task_base* t) noexcept { static_cast<resumer*>(t)->resume_now(); }
  static constexpr task_vtable vtable{&execute, &discard};

  std::coroutine_handle<> h_;
  coroutine_root* root_ = nullptr;
};

// A resumer started by a completion's strategy (`start`): records the latency from completion to
// resumption where `start` is timed (heddle::resume).
class timed_resumer : public resumer {
 public:
  timed_resumer(strategy how, bool timed) noexcept : timed_resumer(&vtable, how, timed) {}

  successor_start start;

 protected:
  timed_resumer(const task_vtable* v, strategy how, bool timed) noexcept : resumer(v), start{nullptr, how, timed} {}
  static void execute(task_base* t) noexcept {
    auto* r = static_cast<timed_resumer*>(t);
    r->start.record_latency();
    r->resume_now();
  }

 private:
  static constexpr task_vtable vtable{&execute, &resumer::discard};
};

// On a worker: runs tasks from the worker's own deque until `s` is done, as forcing a future does
// there (scheduling.hpp), so that a coroutine awaiting a task it spawned itself, not stolen yet,
// runs it here instead of suspending and being resumed. True if `s` is done. The awaited record
// itself runs in the awaiter's isolation (as force runs it); any other task is put back, and the
// loop stops, at a task of another isolation region. Stops when the deque is empty. Traced, each
// run is recorded: run_own_work_until_done decides once, on entry, as force does, and the traced
// loop is out of line (run_own_work_traced, src/core/coroutines.cpp).
template <bool Traced>
[[gnu::always_inline]] inline bool run_own_work(worker* w, future_state_base* s) noexcept {
  auto run = [w](task_base* t) {
    w->stats.executed.bump();
    if constexpr (Traced) trace::run_traced(t, t->vt->execute, trace::how::nested);
    else t->vt->execute(t);
  };
  while (task_base* t = w->deque.pop()) {
    if (t == s) {
      // Its coroutine's end, if it comes before this returns, completes it owned
      // (worker::owned_run). Set around the run only, as the coroutine may suspend inside.
      const void* outer = w->owned_run;
      w->owned_run = s;
      run(t);
      w->owned_run = outer;
    } else {
      if (t->isolation != w->isolation.load(std::memory_order_relaxed)) [[unlikely]] {
        w->deque.push(t);
        break;
      }
      run(t);
    }
    if (s->is_done()) return true;
  }
  return s->is_done();
}
HEDDLE_EXPORT bool run_own_work_traced(worker* w, future_state_base* s) noexcept;
[[gnu::always_inline]] inline bool run_own_work_until_done(future_state_base* s) noexcept {
  worker* w = current_worker;
  if (!w) return false;
  if (trace::on()) [[unlikely]]
    return run_own_work_traced(w, s);
  return run_own_work<false>(w, s);
}

// A coroutine past a co_await of something done already yields when tasks wait in the express lane
// of the worker it runs on (future_awaiter's comment says why): that worker, or nullptr to go on.
inline worker* worker_to_yield_on() noexcept {
  worker* w = current_worker;
  return w && express_waiting(w) ? w : nullptr;
}

// co_await of a future<T>: attaches to the future's state; once it is done the coroutine resumes on
// the runtime it was running on when it suspended (`home`), by the plain successor rule (completed by
// one of that runtime's workers: its deque; anywhere else: default_strategy) or, through
// heddle::resume, by the strategy given, its latency recorded. Owned: the awaiter holds the state's
// reference (co_await of an rvalue: the value is moved out and the state released); else the future
// keeps it (co_await of an lvalue: the value stays in the future). The awaiter has no destructor
// (a check of the state at every await's end, in every frame): await_resume releases an owned
// state, and a coroutine destroyed while it waits here (its runtime stopping) has it released by
// what destroys it (the suspension's discard, or the detach of its listed chain).
template <class T, bool Owned>
class future_awaiter final {
 public:
  future_awaiter(future_state<T>* s, strategy how, bool timed) noexcept : s_(s), how_(how), timed_(timed) {}
  future_awaiter(future_awaiter&& o) noexcept : s_(o.s_), how_(o.how_), timed_(o.timed_) {}
  future_awaiter(const future_awaiter&) = delete;

  // A future done already: the coroutine goes on at once, unless tasks wait in the express lane of
  // the worker it runs on (completions from engines and other threads); then it yields to them
  // (await_suspend). A `then` successor of a done future waits its turn on the deque likewise: a
  // coroutine whose awaits keep completing at once (reads and writes that never block) would
  // otherwise hold the worker and leave those completions waiting, and start its next operation
  // before the others' completions had run (in the echo server, a read that finds nothing yet).
  bool await_ready() const noexcept { return s_->is_done() && !worker_to_yield_on(); }
  // Inlined where the coroutine awaits: in fork-join code the awaited task is at the bottom of the
  // worker's own deque, and running it is the common case; the suspension is out of line.
  template <class P>
  [[gnu::always_inline]] bool await_suspend(std::coroutine_handle<P> h) noexcept {
    if (s_->is_done()) [[unlikely]]
      return yield_to_express(h);
    if (run_own_work_until_done(s_)) return false;  // a task of this worker's own: done here
    return suspend(h);
  }
  decltype(auto) await_resume() {
    if constexpr (Owned) {
      struct released {
        future_state<T>* s;
        ~released() { s->release(); }
      } guard{s_};
      if constexpr (std::is_void_v<T>) s_->value_ref();
      else return T(std::move(s_->value_ref()));
    } else {
      return s_->value_ref();
    }
  }

 private:
  template <class P>
  [[gnu::noinline]] bool suspend(std::coroutine_handle<P> h) noexcept {
    suspension* sp = ::new (static_cast<void*>(&suspension_)) suspension(how_, timed_, s_);
    sp->prepare(h);
    sp->start.home = current_core();
    coroutine_root* r = sp->root();
    if (r) enlist_suspended(sp->start.home, r, s_, sp, &suspension::detach);
    if (s_->attach(sp)) return true;
    if (r) delist_suspended(sp->start.home, r);  // done meanwhile: go on without suspending
    return false;
  }

  // The coroutine goes on as a task of its worker's own deque, after the express lane's tasks (the
  // worker's loop takes those first); not when that lane is empty by now, or off a worker.
  template <class P>
  [[gnu::noinline]] bool yield_to_express(std::coroutine_handle<P> h) noexcept {
    worker* w = worker_to_yield_on();
    if (!w) return false;
    suspension* sp = ::new (static_cast<void*>(&suspension_)) suspension(how_, /*timed=*/false, s_);
    sp->prepare(h);
    sp->start.home = w->core;
    spawn_local(w, static_cast<resumer*>(sp));
    return true;
  }

  // What a suspension needs (the task that resumes the coroutine, the continuation the state calls):
  // made by await_suspend only when the coroutine does suspend. A future done already, or whose
  // task this worker ran itself, costs none of it.
  // The continuation first: its alignment's padding would otherwise follow the resumer, and the
  // state's pointer would make the awaiter (and every frame with one) 16 bytes larger.
  struct suspension final : continuation, timed_resumer {
    suspension(strategy how, bool timed, future_state<T>* s) noexcept
        : continuation{&on_ready}, timed_resumer(&vtable, how, timed), awaited(s) {}
    using timed_resumer::root;

    static void on_ready(continuation* c) noexcept {
      auto* sp = static_cast<suspension*>(c);
      if (coroutine_root* r = sp->root())
        return resume_suspended(sp->start.home, r, sp->start, static_cast<resumer*>(sp));
      sp->start.release(static_cast<resumer*>(sp));
    }
    // The resumption discarded by a stopping runtime: the coroutine never takes the value, and its
    // frames go (resumer::discard); an owned state is let go first.
    static void discard(task_base* t) noexcept {
      if constexpr (Owned) static_cast<suspension*>(static_cast<resumer*>(t))->awaited->release();
      resumer::discard(t);
    }
    // The listed chain taken back from the state by a stopping runtime, which destroys it next: an
    // owned state is let go (its completer, if it ever comes, frees it).
    static bool detach(coroutine_root* r) noexcept {
      if (!detach_from_future(r)) return false;
      if constexpr (Owned) static_cast<future_state_base*>(r->awaited)->release();
      return true;
    }
    static constexpr task_vtable vtable{&timed_resumer::execute, &discard};

    future_state<T>* awaited;
  };

  future_state<T>* s_;
  strategy how_;
  bool timed_;
  union {
    suspension suspension_;  // trivially destructible: nothing to end
  };
};

// co_await of a shared_future<T>: listens to the shared state (any number of coroutines and threads
// at once); resumed as future_awaiter's are. Owned: the awaiter holds a reference of its own (co_await
// of an rvalue: the value is copied out); else the shared_future awaited keeps the state (an lvalue:
// a const reference to the value, as get() gives). A coroutine heddle started listens through a
// relay, a small record of its own, because a listener cannot be taken back from the shared state's
// list: a stopping runtime detaches the relay instead (it then frees itself when the state completes)
// and destroys the chain.
template <class T, bool Owned>
class shared_awaiter final : private timed_resumer, private listener {
 public:
  shared_awaiter(shared_state<T>* s, strategy how, bool timed) noexcept
      : timed_resumer(how, timed), listener(&on_ready), s_(s) {
    if constexpr (Owned) s_->ref();
  }
  shared_awaiter(shared_awaiter&& o) noexcept
      : timed_resumer(o.start.how, o.start.timed), listener(&on_ready), s_(std::exchange(o.s_, nullptr)) {}
  shared_awaiter(const shared_awaiter&) = delete;
  ~shared_awaiter() {
    if constexpr (Owned) {
      if (s_) s_->unref();
    }
  }

  // Done already: goes on at once, or yields to the express lane's tasks, as future_awaiter does.
  bool await_ready() const noexcept { return s_->is_done() && !worker_to_yield_on(); }
  // Throws std::bad_alloc if the relay cannot be made (the coroutine goes on with the exception).
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    if (s_->is_done()) [[unlikely]]
      return yield_to_express(h);
    prepare(h);
    start.home = current_core();
    coroutine_root* r = root();
    if (!r) return s_->listen(this);  // false: done meanwhile
    auto* rl = make_record<relay>(this);
    enlist_suspended(start.home, r, rl, nullptr, &relay::detach);
    if (s_->listen(rl)) return true;
    delist_suspended(start.home, r);  // done meanwhile: go on without suspending
    free_record(rl);
    return false;
  }
  decltype(auto) await_resume() const {
    if constexpr (std::is_void_v<T>) s_->source()->value_ref();
    else if constexpr (Owned) return T(std::as_const(s_->source()->value_ref()));
    else return static_cast<const T&>(s_->source()->value_ref());
  }

 private:
  // As future_awaiter's: a task of the worker's deque, its latency not recorded (nothing awaited).
  template <class P>
  [[gnu::noinline]] bool yield_to_express(std::coroutine_handle<P> h) noexcept {
    worker* w = worker_to_yield_on();
    if (!w) return false;
    prepare(h);
    start.timed = false;
    start.home = w->core;
    spawn_local(w, static_cast<resumer*>(this));
    return true;
  }

  // The listener of a listed coroutine: resumes it unless a stopping runtime took it back first.
  struct relay final : listener {
    explicit relay(shared_awaiter* a) noexcept : listener(&on_ready), target(a) {}
    std::atomic<shared_awaiter*> target;
    static void on_ready(continuation* c) noexcept {
      auto* rl = static_cast<relay*>(static_cast<listener*>(c));
      if (shared_awaiter* a = rl->target.exchange(nullptr, std::memory_order_acq_rel))
        resume_suspended(a->start.home, a->root(), a->start, static_cast<resumer*>(a));
      free_record(rl);
    }
    static bool detach(coroutine_root* r) noexcept {
      return static_cast<relay*>(r->awaited)->target.exchange(nullptr, std::memory_order_acq_rel) != nullptr;
    }
  };

  static void on_ready(continuation* c) noexcept {
    auto* a = static_cast<shared_awaiter*>(static_cast<listener*>(c));
    a->start.release(static_cast<resumer*>(a));
  }

  shared_state<T>* s_;
};

// co_await heddle::schedule(rt): the coroutine goes on as a task of `rt`.
class schedule_awaiter final : private resumer {
 public:
  explicit schedule_awaiter(runtime_core* core) noexcept : core_(core) {}
  bool await_ready() const noexcept {
    worker* w = current_worker;
    return w && w->core == core_;  // on one of its workers already
  }
  template <class P>
  void await_suspend(std::coroutine_handle<P> h) noexcept {
    prepare(h);
    schedule(core_, static_cast<resumer*>(this));
  }
  void await_resume() const noexcept {}

 private:
  runtime_core* core_;
};

}  // namespace heddle::core_detail

namespace heddle::core_detail {

// The record behind spawn()'s future: a task that starts the spawned coroutine (its first run
// resumes the frame), then the state that the coroutine's end completes (free_frame). No
// `run`: a worker waiting on the future pops it and runs it through `execute`, as a record that is
// no plain task's.
template <class T>
class spawn_state final : public future_state<T>, public coroutine_root {
 public:
  spawn_state() noexcept : future_state<T>(&vtable), coroutine_root(&abandon_chain) {}
  // Made for the coroutine `h`: in its frame block's tail where there is room, else a record of
  // its own; named in the frame's header as the record that the frame's end completes. Throws
  // bad_alloc where a record of its own cannot be had.
  static spawn_state* make_for(std::coroutine_handle<> h) {
    frame_header* fh = header_of(h.address());
    spawn_state* s;
    if (fh->record_room) [[likely]] {
      s = ::new (reinterpret_cast<std::byte*>(fh) + fh->record_room) spawn_state();
      s->frame_block_ = fh;
      fh->holds_record = 1;
    } else {
      s = make_record<spawn_state>();
    }
    s->top = h;
    fh->completes = s;
    return s;
  }

 private:
  static void execute(task_base* t) noexcept { static_cast<spawn_state*>(t)->top.resume(); }
  static void discard(task_base* t) noexcept { abandon_chain(static_cast<spawn_state*>(t)); }
  // The chain is destroyed instead of resumed (its outermost frame, and through its locals every
  // frame it awaits): the future fails as a discarded task's does, once the frames are gone.
  static void abandon_chain(coroutine_root* r) noexcept {
    auto* s = static_cast<spawn_state*>(r);
    header_of(s->top.address())->completes = nullptr;
    s->top.destroy();
    s->set_error(shutdown_error());
    s->complete();
  }
  // After the frame's end (its deallocation completes this record, or the chain was destroyed
  // first): the block goes with the record.
  static void destroy(future_state_base* b) noexcept {
    auto* s = static_cast<spawn_state*>(b);
    // A value with nothing to destroy, in the frame's block: the common case, inline, with no
    // registers saved. A value to destroy, an exception to release, or a record of its own: out of
    // line.
    if (!std::is_trivially_destructible_v<T> || s->kind == result_kind::error || !s->frame_block_) [[unlikely]]
      return destroy_slowly(s);
    free_frame_block(s->frame_block_);
  }
  [[gnu::noinline]] static void destroy_slowly(spawn_state* s) noexcept {
    frame_header* block = s->frame_block_;
    if (!block) return free_record(s);
    s->~spawn_state();
    free_frame_block(block);
  }
  static constexpr future_vtable vtable{{&execute, &discard}, nullptr, &destroy};

  frame_header* frame_block_ = nullptr;  // the frame block this record lives in, if it does
};

}  // namespace heddle::core_detail
