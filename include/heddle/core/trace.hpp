// SPDX-License-Identifier: Apache-2.0
// heddle::trace — a trace of what the runtime did, in Chrome's trace-event JSON (Perfetto's UI and
// chrome://tracing open it; the project's trace tool summarises and plots it). docs/trace.md says
// what is recorded and how to read it.
//
// Three ways to record, all of them the same session:
//   HEDDLE_TRACE=FILE in the environment   from the library's start until the process exits
//                                          (HEDDLE_TRACE_BUFFER=SIZE sets the per-thread buffer)
//   heddle::trace::start(path) ... stop()  a part of a program
//   --trace FILE                           the project's tools (docs/trace.md)
//
// Cost. Off, each place that records costs a load and a branch; with -DHEDDLE_TRACE=OFF nothing.
// On, a record is a time-stamp counter read and a 40-byte store into the calling thread's buffer:
// no lock, no allocation (but the first record of a thread in a session, which allocates its
// buffer), never blocking. A full buffer drops records and counts them; the file, stop()'s result
// and the trace tool's summary report how many.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "heddle/core/detail/trace.hpp"
#include "heddle/core/export.hpp"

namespace heddle::trace {

// A trace could not be started or written: another is being recorded, none is, the file cannot be
// opened or written (the message names it and the system's reason), or heddle was built without
// the recorder (-DHEDDLE_TRACE=OFF).
class HEDDLE_EXPORT trace_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct options {
  // Each thread's buffer: records beyond it are dropped and counted. 40 bytes a record.
  std::size_t buffer_bytes = std::size_t{16} << 20;
  // The process's name in the trace; empty: the program's name.
  std::string process_name;
  // 1 in this many items of the kinds that sample (a power of two: a queue's items) gets a flow from
  // its enqueue to its run, chosen by a hash of the item's address; 1: every item.
  std::uint32_t queue_item_sampling = 16;
};

// What a stopped session wrote.
struct result {
  std::string path;
  std::uint64_t records = 0;  // written to the file
  std::uint64_t dropped = 0;  // lost to full buffers
  unsigned threads = 0;       // threads that recorded
};

// Starts recording into `path`, which is created (or truncated) now, so that a bad path fails
// here. Throws trace_error if a session is active (HEDDLE_TRACE's included), if the file cannot be
// opened, if an option is out of range (a buffer under 16 records, a sampling that is not a power
// of two), or if heddle was built with -DHEDDLE_TRACE=OFF; std::bad_alloc if memory runs out.
HEDDLE_EXPORT void start(const std::string& path, const options& o = {});

// Stops recording and writes the file: every thread's records up to now, converted to steady-clock
// time, sorted per thread. Records made by threads still running after this returns are not in it;
// a task that another thread is finishing (its result seen, its record not yet made) is waited for,
// up to 100 ms. Takes at least 20 ms from start() (the clock's calibration) and a pass over the
// records. Throws trace_error if no session is
// active or the file cannot be written (the records are lost then; the message says where).
HEDDLE_EXPORT result stop();

// Whether a session is recording now. Wait-free.
inline bool active() noexcept { return core_detail::trace::on(); }

// Whether this heddle was built with the recorder (-DHEDDLE_TRACE=ON, the default).
constexpr bool compiled_in() noexcept { return HEDDLE_TRACE_COMPILED != 0; }

// A copy of `text` that lives until the process ends, for labels made at run time (a plugin's
// label, say): records keep a label's address, not its characters. The same text gives the same
// pointer. Takes a lock; call it when setting up, not on every record.
HEDDLE_EXPORT const char* intern(std::string_view text);

// Names the calling thread's track in traces ("worker 3", "timer engine"): this session's and
// later ones'. Threads without a name appear as "thread N".
HEDDLE_EXPORT void set_thread_name(std::string_view name);

// A span of the program's own on the calling thread, from construction to destruction (cat "user").
// `name` must live until the trace is written: a literal or intern()ed.
class span {
 public:
  explicit span(const char* name) noexcept : s_(core_detail::trace::kind::user_span, name) {}
  span(const span&) = delete;
  span& operator=(const span&) = delete;

 private:
  core_detail::trace::scoped_span s_;
};

// A point in time on the calling thread's track (cat "user").
inline void instant(const char* name) noexcept {
  if (active()) core_detail::trace::emit_instant(core_detail::trace::kind::user_instant, name);
}

// A callable that gives the task running it a label in traces. heddle::named("unpack", f) goes
// wherever f would: heddle::task, task_group::run, the algorithms' bodies. When the task ends,
// its record takes the label of the last named callable that returned in it (the body of a
// parallel_for task calls its named body once per chunk: the task takes its label). Calls f
// exactly as f would be called; costs a branch when tracing is off. `label` must live until the
// trace is written: a literal or intern()ed.
template <class F>
class named_function {
 public:
  template <class G>
  named_function(const char* label, G&& f) : label_(label), f_(std::forward<G>(f)) {}

  template <class... A>
  decltype(auto) operator()(A&&... args) {
    label_on_return guard{label_};
    return std::invoke(f_, std::forward<A>(args)...);
  }
  template <class... A>
  decltype(auto) operator()(A&&... args) const {
    label_on_return guard{label_};
    return std::invoke(f_, std::forward<A>(args)...);
  }

  const char* label() const noexcept { return label_; }

 private:
  // Set on the way out (a throw's included): tasks this call ran inside (helping) have closed
  // their own records by then.
  struct label_on_return {
    const char* label;
    ~label_on_return() {
      if (active()) core_detail::trace::pending_label = label;
    }
  };
  const char* label_;
  F f_;
};

template <class F>
named_function<std::decay_t<F>> named(const char* label, F&& f) {
  return named_function<std::decay_t<F>>(label, std::forward<F>(f));
}

}  // namespace heddle::trace

namespace heddle {
using trace::named;
}  // namespace heddle
