// SPDX-License-Identifier: Apache-2.0
// The trace's recording path, for every layer: a record is a fixed-size struct stored in the
// calling thread's own buffer, stamped with the CPU's time-stamp counter. No lock, no allocation,
// no read-modify-write: a store of the record and a release store of the thread's count, which the
// writer (src/core/trace/) reads when the trace stops. A full buffer drops the record and counts it.
//
// Compiled out (-DHEDDLE_TRACE=OFF, HEDDLE_TRACE_COMPILED 0), on() is a constant false and every
// call site vanishes. Compiled in and off, a call site is one relaxed load of a global and a
// branch (heddle-bench spawn: trace_off_vs_compiled_out).
//
// What is recorded: a record's `kind` names a layer and one of that layer's kinds. The core's own
// are below; a layer above makes its own with layer_kind() and installs how each becomes a
// trace event (heddle/core/detail/trace_extension.hpp). docs/trace.md lists them all.
#pragma once

#include <atomic>
#include <cstdint>

#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/task_record.hpp"
#include "heddle/core/export.hpp"

#if HEDDLE_TRACE_COMPILED && (defined(__x86_64__) || defined(__i386__))
#include <x86intrin.h>
#define HEDDLE_DETAIL_TRACE_TSC 1
#else
#define HEDDLE_DETAIL_TRACE_TSC 0
#endif

namespace heddle::core_detail::trace {

// What a record stands for: a layer's number (the high byte; the core's is 0) and a number of that
// layer's own (the low byte). The core's kinds are named here; the comments give the trace event
// each becomes: ph, cat, name; what `sub`, `arg` and `id` hold. A layer above names its own with
// layer_kind (its number is its own choice, unique among the layers: docs/trace.md lists them).
enum class kind : std::uint16_t {
  task,          // X task, label or "task"; sub: how (below); arg: 1 + worker stolen from, 0 if not stolen
  search,        // X worker "search": looked for work and found none yet
  park_begin,    // B worker "parked"; sub: 0 idle, 1 waiting
  park_end,      // E worker "parked"; arg: 1 woken, 0 timed out
  wait,          // X worker "wait": forcing a future / waiting for a group on a worker; sub: wait_on
  block,         // X worker "block": a thread that is no worker waited for a future; sub: wait_on
  wake,          // i worker "wake"; arg: the worker woken
  user_span,     // X user, name
  user_instant,  // i user, name
  flow_begin,    // s flow "successor": a completion released a successor; sub: strategy; id
  flow_end,      // f flow "successor": the successor started; sub: strategy; id
  core_count_    // the core's kinds are those below this
};

// Kind `code` of layer `layer` (1 to 255: 0 is the core's).
constexpr kind layer_kind(std::uint8_t layer, std::uint8_t code) noexcept {
  return static_cast<kind>(std::uint16_t{layer} << 8 | code);
}
constexpr std::uint8_t layer_of(kind k) noexcept {
  return static_cast<std::uint8_t>(static_cast<std::uint16_t>(k) >> 8);
}

// How a task came to run (kind::task's sub).
enum class how : std::uint16_t { loop, nested, inline_run, successor };
// What a waiter waited for (kind::wait's sub).
enum class wait_on : std::uint16_t { task, future, group };

struct record {
  std::uint64_t t0;  // ticks (now()); the only time of an instant, B or E
  std::uint64_t t1;  // ticks at the end of a span (X)
  std::uint64_t id;  // a flow's id, or a number of the kind's own
  union {
    const char* name;     // a label that lives until the trace is written (a literal, or intern()ed)
    std::uint64_t value;  // or, for a kind without one, a number (two packed, say)
  };
  kind k;
  std::uint16_t sub;
  std::uint32_t arg;
};
static_assert(sizeof(record) == 40);

// One thread's records in one session. Written by its thread only; `count` is published with a
// release store so that the writer, which loads it with acquire, reads whole records.
struct thread_buffer {
  record* data = nullptr;
  std::uint32_t capacity = 0;
  std::atomic<std::uint32_t> count{0};
  std::atomic<std::uint64_t> dropped{0};
  // Task spans begun and not yet recorded (run_traced). A task's completion, which another thread
  // may see and then stop the session, comes before its record: stop() waits a moment for these.
  std::atomic<std::uint32_t> open{0};
  std::uint32_t session = 0;  // the session these records belong to
};

// The session being recorded, 0 when none. Written by start and stop only.
HEDDLE_EXPORT extern std::atomic<std::uint32_t> active_session;
// Which items of a sampled kind get a flow from their enqueue to their run (sampled(), below):
// those whose address hashes to 0 under this mask (options::queue_item_sampling - 1). Set by start.
HEDDLE_EXPORT extern std::atomic<std::uint32_t> item_sample_mask;

// The calling thread's buffer, or nullptr before its first record.
HEDDLE_FAST_TLS(thread_buffer*, thread_records);
// The label of the last heddle::named callable that returned on this thread, which the task
// record being closed takes (heddle/core/trace.hpp: named). Set only while tracing.
HEDDLE_FAST_TLS(const char*, pending_label);

inline bool on() noexcept {
#if HEDDLE_TRACE_COMPILED
  return active_session.load(std::memory_order_relaxed) != 0;
#else
  return false;
#endif
}

// Now, in ticks: the time-stamp counter on x86 (about 10 ns a read where steady_clock costs 22),
// steady-clock nanoseconds elsewhere. The session maps ticks to steady-clock time.
inline std::uint64_t now() noexcept {
#if HEDDLE_DETAIL_TRACE_TSC
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(steady_now_ns());
#endif
}

// This process's clock against the clock of the process its run of several takes as the reference
// (a layer that runs several processes measures it): add offset_ns to put this process's times on
// the reference's clock, true within ± uncertainty_ns. Written into the trace's
// otherData.processes[]; kept across sessions.
HEDDLE_EXPORT void set_clock_offset(std::int64_t offset_ns, std::int64_t uncertainty_ns) noexcept;

// Gives the calling thread a buffer in the active session: once per thread and session, under the
// session's lock (the one allocation). nullptr if no session is active or memory ran out.
HEDDLE_EXPORT thread_buffer* attach_thread() noexcept;

// Stores `r` in `b`, the calling thread's buffer, or counts it dropped when `b` is full.
inline void append(thread_buffer& b, const record& r) noexcept {
  const std::uint32_t n = b.count.load(std::memory_order_relaxed);
  if (n >= b.capacity) [[unlikely]] {
    b.dropped.store(b.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  b.data[n] = r;
  b.count.store(n + 1, std::memory_order_release);
}

// The calling thread's buffer in the active session, or nullptr if none is active.
inline thread_buffer* current_buffer() noexcept {
  thread_buffer* b = thread_records;
  if (!b || b->session != active_session.load(std::memory_order_relaxed)) [[unlikely]]
    return attach_thread();
  return b;
}

inline void emit(const record& r) noexcept {
#if HEDDLE_TRACE_COMPILED
  if (thread_buffer* b = current_buffer()) append(*b, r);
#else
  (void)r;
#endif
}

inline void emit_span(kind k, std::uint64_t t0, std::uint64_t t1, const char* name = nullptr, std::uint16_t sub = 0,
                      std::uint32_t arg = 0, std::uint64_t id = 0) noexcept {
  emit(record{t0, t1, id, {name}, k, sub, arg});
}
inline void emit_instant(kind k, const char* name = nullptr, std::uint16_t sub = 0, std::uint32_t arg = 0,
                         std::uint64_t id = 0) noexcept {
  emit(record{now(), 0, id, {name}, k, sub, arg});
}

// A span from construction to destruction, recorded if tracing was on when it began: the record is
// filled in at the start, its end time at the end. Off, it costs the check and a store (a group's
// wait takes one in every fork-join). The one span class: the core's waits, heddle::trace::span,
// the layers' spans of a scope.
class scoped_span {
 public:
  explicit scoped_span(kind k, const char* name = nullptr, std::uint64_t id = 0, std::uint32_t arg = 0,
                       std::uint16_t sub = 0) noexcept {
    if (on()) [[unlikely]]
      r_ = record{now(), 0, id, {name}, k, sub, arg};
    else r_.t0 = 0;
  }
  ~scoped_span() {
    if (r_.t0) [[unlikely]] {
      r_.t1 = now();
      emit(r_);
    }
  }
  scoped_span(const scoped_span&) = delete;
  scoped_span& operator=(const scoped_span&) = delete;

 private:
  record r_;
};

// Whether an item (a queued one, say) is one of the sampled: a hash of its address, so that its
// enqueue and its run agree with nothing stored in the item.
inline bool sampled(const void* item) noexcept {
  const std::uint64_t h = (reinterpret_cast<std::uintptr_t>(item) >> 4) * 0x9e3779b97f4a7c15ull;
  return ((h >> 40) & item_sample_mask.load(std::memory_order_relaxed)) == 0;
}

// A successor's flow id: its record (stable while it waits) and its release time, mixed.
inline std::uint64_t flow_id(const void* successor, std::int64_t ready_ns) noexcept {
  std::uint64_t x = reinterpret_cast<std::uintptr_t>(successor) ^
                    (static_cast<std::uint64_t>(ready_ns) * 0x9e3779b97f4a7c15ull);
  x ^= x >> 31;
  return x & ((std::uint64_t{1} << 53) - 1);  // exact in a JSON number
}

// Runs `t` with `run` (its execute, or a future's run) and records a task span: the label a named
// callable left, and the worker it was stolen from (task_base::trace_tag, which a steal writes;
// read before the run, which may free the record). The span goes into the buffer of the session it
// began in, even if that session stopped meanwhile (stop() waits briefly for open spans:
// thread_buffer::open). Inline for the core's own traced paths; run_traced for inlined user code.
inline void run_and_record(task_base* t, void (*run)(task_base*) noexcept, how h) noexcept {
  thread_buffer* b = current_buffer();
  if (!b) [[unlikely]]
    return run(t);
  const std::uint32_t stolen_from = t->thief.load(std::memory_order_relaxed) ? t->trace_tag + 1 : 0;
  const std::uint32_t open = b->open.load(std::memory_order_relaxed);
  // Relaxed: the task's completion, a release inside run(), publishes it to whoever sees that.
  b->open.store(open + 1, std::memory_order_relaxed);
  pending_label = nullptr;
  const std::uint64_t t0 = now();
  run(t);
  const std::uint64_t t1 = now();
  append(*b, record{t0, t1, 0, {pending_label}, kind::task, static_cast<std::uint16_t>(h), stolen_from});
  pending_label = nullptr;
  b->open.store(open, std::memory_order_release);
}
HEDDLE_EXPORT void run_traced(task_base* t, void (*run)(task_base*) noexcept, how h) noexcept;

}  // namespace heddle::core_detail::trace
