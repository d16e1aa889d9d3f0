// SPDX-License-Identifier: Apache-2.0
// The trace session: starting and stopping, the threads' buffers, HEDDLE_TRACE.
//
// Buffers. A thread's first record in a session gives it a buffer (attach_thread, under the
// registry's lock), mapped and populated then: 2.4-4.5 ms for the default 16 MiB here, once per
// thread and session. A buffer is written by its
// thread only and read by stop() up to the count it published. It outlives the session: a thread
// still recording as the session stops (it saw the session on just before) writes beyond what stop
// read, into memory that stays mapped while the thread lives; stop() gives the touched pages back
// to the system (MADV_DONTNEED: a late write finds a fresh zero page) and unmaps the buffers of
// threads that have ended. The thread's next session starts its buffer over.
#include "session.hpp"
#include "environment.hpp"
#include "process_group.hpp"

#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#include "heddle/core/trace.hpp"

namespace heddle::core_detail::trace {

constinit std::atomic<std::uint32_t> active_session{0};
constinit std::atomic<std::uint32_t> item_sample_mask{15};

namespace {
// The session stop() is closing: it has turned tracing off (no span begins) and waits for the task
// spans still open; the records those tasks make meanwhile (a drain's span, closed just before its
// task's) still land in their buffers.
std::atomic<std::uint32_t> closing_session{0};

// set_clock_offset's: one process, one offset (a run has one reference), kept across sessions.
std::atomic<bool> clock_measured{false};
std::atomic<std::int64_t> clock_offset{0}, clock_uncertainty{0};
}  // namespace

void set_clock_offset(std::int64_t offset_ns, std::int64_t uncertainty_ns) noexcept {
  clock_offset.store(offset_ns, std::memory_order_relaxed);
  clock_uncertainty.store(uncertainty_ns, std::memory_order_relaxed);
  clock_measured.store(true, std::memory_order_release);
}
HEDDLE_FAST_TLS_DEFINITION(thread_buffer*, thread_records);
HEDDLE_FAST_TLS_DEFINITION(const char*, pending_label);

namespace {

struct thread_entry {
  thread_buffer buf;
  std::size_t mapped_bytes = 0;
  pid_t tid = 0;
  std::string name;
  bool alive = true;

  void unmap() noexcept {
    if (buf.data) munmap(buf.data, mapped_bytes);
    buf.data = nullptr;
    buf.capacity = 0;
    mapped_bytes = 0;
  }
};

// The entries of every thread that recorded and is alive (or ended during the session). Guarded by
// `m`; `stop_m` serialises start and stop (held while a file is written, which `m` is not).
struct registry {
  std::mutex m;
  std::vector<std::unique_ptr<thread_entry>> entries;
  std::uint32_t session = 0;  // the active session, 0 when none
  std::uint32_t last_session = 0;
  std::size_t capacity = 0;  // records per buffer in this session
  std::size_t buffer_bytes = 0;
  std::string path;
  std::FILE* file = nullptr;
  std::string process_name;
  bool named = false;  // process_name is the options'; else the program's, and the process's index is added at the stop
  std::uint64_t ticks0 = 0;
  std::int64_t ns0 = 0;

  std::mutex stop_m;
};

registry& reg() {
  static registry r;
  return r;
}

thread_local thread_entry* this_thread_entry = nullptr;
thread_local std::string this_thread_name;

// Marks the thread's entry ended when the thread exits, so that the next stop() frees it.
struct exit_hook {
  ~exit_hook() {
    if (!this_thread_entry) return;
    std::lock_guard lock(reg().m);
    this_thread_entry->alive = false;
    this_thread_entry = nullptr;
    thread_records = nullptr;
  }
};
thread_local exit_hook this_thread_exit_hook;

bool map_buffer(thread_entry& e, std::size_t capacity) noexcept {
  if (e.buf.capacity == capacity && e.buf.data) {
    // Populate again what the last stop() gave back, before any record lands in it: the owner
    // touches its own pages.
    auto* bytes = reinterpret_cast<volatile char*>(e.buf.data);
    for (std::size_t off = 0; off < e.mapped_bytes; off += 4096) bytes[off] = 0;
    return true;
  }
  e.unmap();
  const std::size_t bytes = capacity * sizeof(record);
  // Populated now: a record never takes a page fault (which cost 15 ns a record, spread over the
  // records that crossed a page: measured, heddle-bench spawn's trace_ns_per_event).
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) return false;
  e.buf.data = static_cast<record*>(p);
  e.buf.capacity = static_cast<std::uint32_t>(capacity);
  e.mapped_bytes = bytes;
  return true;
}

// A (ticks, steady ns) pair read as close together as the clocks allow: the best of a few tries.
std::pair<std::uint64_t, std::int64_t> clock_pair() noexcept {
  std::uint64_t best_ticks = 0;
  std::int64_t best_ns = 0, best_gap = INT64_MAX;
  for (int i = 0; i < 8; ++i) {
    const std::int64_t a = steady_now_ns();
    const std::uint64_t t = now();
    const std::int64_t b = steady_now_ns();
    if (b - a < best_gap) {
      best_gap = b - a;
      best_ticks = t;
      best_ns = a + (b - a) / 2;
    }
  }
  return {best_ticks, best_ns};
}

// Ticks per steady-clock nanosecond from the session's first and last pair; the pairs must be
// at least this far apart for the rate to be within a few parts per million.
constexpr std::int64_t min_calibration_ns = 20'000'000;

// How long stop() waits, at most, for other threads' task spans to close: a thread that has just
// completed a task closes its span within microseconds, unless the VM stalls it (stalls of 6 ms
// were seen in traces here), so the bound is generous; it is reached only when a task is still
// running, which the trace could not have recorded anyway.
constexpr std::int64_t open_span_patience_ns = 100'000'000;

std::string program_name() {
  std::string name = program_invocation_short_name ? program_invocation_short_name : "heddle";
  return name;
}

// The host's boot id: the processes of one boot share CLOCK_MONOTONIC, hence the trace's times.
std::string boot_id() {
  std::string id;
  if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f)) id = buf;
    std::fclose(f);
  }
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// HEDDLE_TRACE: after the registry's functions it uses, before main.
environment_session from_environment;

pid_t os_thread_id() noexcept { return static_cast<pid_t>(gettid()); }

std::string default_thread_name(pid_t tid) {
  if (tid == getpid()) return "main";
  return "thread " + std::to_string(tid);
}

}  // namespace

thread_buffer* attach_thread() noexcept {
  if (thread_buffer* own = thread_records;
      own && own->session != 0 && own->session == closing_session.load(std::memory_order_acquire))
    return own;
  if (active_session.load(std::memory_order_acquire) == 0) return nullptr;
  registry& r = reg();
  std::lock_guard lock(r.m);
  if (r.session == 0) return nullptr;
  thread_entry* e = this_thread_entry;
  if (!e) {
    try {
      auto made = std::make_unique<thread_entry>();
      made->tid = os_thread_id();
      made->name = this_thread_name.empty() ? default_thread_name(made->tid) : this_thread_name;
      r.entries.push_back(std::move(made));
    } catch (...) {
      return nullptr;
    }
    e = r.entries.back().get();
    this_thread_entry = e;
    (void)&this_thread_exit_hook;  // constructs the hook, whose destructor runs at thread exit
  }
  if (!map_buffer(*e, r.capacity)) return nullptr;
  e->buf.count.store(0, std::memory_order_relaxed);
  e->buf.dropped.store(0, std::memory_order_relaxed);
  e->buf.session = r.session;
  thread_records = &e->buf;
  return &e->buf;
}

void run_traced(task_base* t, void (*run)(task_base*) noexcept, how h) noexcept { run_and_record(t, run, h); }

}  // namespace heddle::core_detail::trace

namespace heddle::trace {

using namespace core_detail::trace;

void start(const std::string& path, const options& o) {
  if constexpr (!compiled_in())
    throw trace_error("heddle::trace::start: this heddle was built without the trace recorder (-DHEDDLE_TRACE=OFF)");
  registry& r = reg();
  std::lock_guard stop_lock(r.stop_m);
  {
    std::lock_guard lock(r.m);
    if (r.session != 0) throw trace_error("heddle::trace::start: a trace is already being recorded to " + r.path);
  }
  if (path.empty()) throw trace_error("heddle::trace::start: empty file name");
  const std::size_t capacity = std::min<std::size_t>(o.buffer_bytes / sizeof(record), UINT32_MAX);
  if (capacity < 16)
    throw trace_error("heddle::trace::start: a buffer of " + std::to_string(o.buffer_bytes) +
                      " bytes holds fewer than 16 records (40 bytes each)");
  if (o.queue_item_sampling == 0 || (o.queue_item_sampling & (o.queue_item_sampling - 1)) != 0)
    throw trace_error("heddle::trace::start: queue_item_sampling " + std::to_string(o.queue_item_sampling) +
                      " is not a power of two (1 for every item)");
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw trace_error("heddle::trace::start: cannot open " + path + ": " + std::strerror(errno));
  const auto [ticks, ns] = clock_pair();
  std::lock_guard lock(r.m);
  r.path = path;
  r.file = f;
  r.capacity = capacity;
  r.buffer_bytes = o.buffer_bytes;
  r.process_name = o.process_name.empty() ? program_name() : o.process_name;
  r.named = !o.process_name.empty();
  r.ticks0 = ticks;
  r.ns0 = ns;
  item_sample_mask.store(o.queue_item_sampling - 1, std::memory_order_relaxed);
  r.session = ++r.last_session == 0 ? ++r.last_session : r.last_session;
  active_session.store(r.session, std::memory_order_release);
}

result stop() {
  registry& r = reg();
  std::lock_guard stop_lock(r.stop_m);
  snapshot s;
  std::FILE* f;
  std::string path;
  {
    std::lock_guard lock(r.m);
    if (r.session == 0) throw trace_error("heddle::trace::stop: no trace is being recorded");
    const std::uint32_t session = r.session;
    closing_session.store(session, std::memory_order_release);
    active_session.store(0, std::memory_order_release);
    // A task whose completion the caller saw may not have closed its record yet: wait for the
    // threads' open task spans to close, up to a bound (a long task may be running; the caller's
    // own open spans, if it stops from inside a task, cannot close).
    const std::int64_t patience_until = core_detail::steady_now_ns() + open_span_patience_ns;
    for (auto& e : r.entries)
      if (e->buf.session == session && e.get() != this_thread_entry)
        while (e->buf.open.load(std::memory_order_acquire) != 0 && core_detail::steady_now_ns() < patience_until)
          std::this_thread::yield();
    r.session = 0;
    f = r.file;
    r.file = nullptr;
    path = r.path;
    s.node = joined_group().index;
    s.process_name = r.process_name;
    if (!r.named && s.node >= 0) s.process_name += " node " + std::to_string(s.node);
    s.pid = getpid();
    s.boot_id = boot_id();
    s.clock_measured = clock_measured.load(std::memory_order_acquire);
    s.clock_offset_ns = clock_offset.load(std::memory_order_relaxed);
    s.clock_uncertainty_ns = clock_uncertainty.load(std::memory_order_relaxed);
    s.buffer_bytes = r.buffer_bytes;
    for (auto& e : r.entries) {
      if (e->buf.session != session) continue;
      thread_snapshot t;
      t.tid = e->tid;
      t.name = e->name;
      const std::uint32_t n = e->buf.count.load(std::memory_order_acquire);
      t.records.assign(e->buf.data, e->buf.data + n);
      t.dropped = e->buf.dropped.load(std::memory_order_relaxed);
      s.threads.push_back(std::move(t));
    }
    closing_session.store(0, std::memory_order_release);
  }
  // The mapping from ticks to time, over the whole session (at least min_calibration_ns long).
  auto [ticks1, ns1] = clock_pair();
  if (HEDDLE_DETAIL_TRACE_TSC) {
    while (ns1 - r.ns0 < min_calibration_ns) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(min_calibration_ns - (ns1 - r.ns0)));
      std::tie(ticks1, ns1) = clock_pair();
    }
  }
  s.clock.ticks0 = r.ticks0;
  s.clock.ns0 = r.ns0;
  s.clock.tsc = HEDDLE_DETAIL_TRACE_TSC;
  s.clock.ns_per_tick = ticks1 > r.ticks0 ? double(ns1 - r.ns0) / double(ticks1 - r.ticks0) : 1.0;
  s.start_ns = r.ns0;
  s.stop_ns = ns1;

  result out;
  out.path = path;
  out.threads = static_cast<unsigned>(s.threads.size());
  for (auto& t : s.threads) {
    out.records += t.records.size();
    out.dropped += t.dropped;
  }
  std::string failure;
  try {
    write_chrome_trace(f, path.c_str(), s);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (std::fclose(f) != 0 && failure.empty()) failure = "cannot write " + path + ": " + std::strerror(errno);
  {
    // Late writers keep their mapping; the pages go back. Ended threads' buffers go.
    std::lock_guard lock(r.m);
    std::erase_if(r.entries, [](const std::unique_ptr<thread_entry>& e) {
      if (e->alive) {
        if (e->buf.data) madvise(e->buf.data, e->mapped_bytes, MADV_DONTNEED);
        return false;
      }
      e->unmap();
      return true;
    });
  }
  if (!failure.empty()) throw trace_error("heddle::trace::stop: " + failure);
  return out;
}

// Never destroyed: HEDDLE_TRACE's trace is written by a static destructor, which may run after
// this function's statics would have been (they are made later), and its labels point here.
const char* intern(std::string_view text) {
  static auto* m = new std::mutex;
  static auto* texts = new std::set<std::string, std::less<>>;
  std::lock_guard lock(*m);
  auto it = texts->find(text);
  if (it == texts->end()) it = texts->emplace(text).first;
  return it->c_str();
}

void set_thread_name(std::string_view name) {
  this_thread_name.assign(name);
  if (this_thread_entry) {
    std::lock_guard lock(reg().m);
    if (this_thread_entry) this_thread_entry->name.assign(name);
  }
}

}  // namespace heddle::trace

namespace heddle::core_detail::trace {

std::string move_output(const std::string& from, const std::string& to) {
  registry& r = reg();
  std::lock_guard stop_lock(r.stop_m);
  std::lock_guard lock(r.m);
  if (r.session == 0 || r.path != from) return {};
  std::FILE* f = std::fopen(to.c_str(), "w");
  if (!f) return "cannot open " + to + ": " + std::strerror(errno);
  std::fclose(r.file);
  r.file = f;
  r.path = to;
  struct stat st;
  if (::stat(from.c_str(), &st) == 0 && st.st_size == 0) std::remove(from.c_str());
  return {};
}

}  // namespace heddle::core_detail::trace
