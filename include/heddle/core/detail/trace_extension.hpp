// SPDX-License-Identifier: Apache-2.0
// What a layer above the core adds to the trace recorder, which knows only its own kinds of record
// and one process:
//   - its kinds of record (layer_kind, heddle/core/detail/trace.hpp) and how each becomes a
//     trace event: its fields (a writer, given an event_out), its track, its flow (install_kind);
//   - the place of this process in a run of several processes, if the layer starts or joins such
//     runs: the process's index, the file HEDDLE_TRACE's session writes, and what to do with the
//     run's files at exit (join_process_group).
// A layer installs these when its library loads (a static object in a file that its recording
// code references, so that a static link keeps it) and before it records: the writer reads them
// when a session stops. docs/trace.md, "Adding kinds", walks through it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "heddle/core/detail/trace.hpp"
#include "heddle/core/export.hpp"

namespace heddle::core_detail::trace {

class json_out;
struct clock_map;

// One trace event being written, for a kind's writer: open it with begin or span, add fields with
// raw, str and num (each a JSON fragment: `,"args":{...}`), and close it with raw("}"). Given by
// the writer while it writes one track; valid only during the call.
class event_out {
 public:
  // Opens {"ph":ph,"cat":cat,"name":name,"pid":...,"tid":...,"ts":...}, without its closing brace:
  // a trace event of this process on the track being written, at `ticks` (a record's t0 or t1).
  HEDDLE_EXPORT event_out& begin(char ph, std::string_view cat, std::string_view name, std::uint64_t ticks);
  // The same at a steady-clock time in nanoseconds (the writer's own: metadata at 0).
  HEDDLE_EXPORT event_out& begin_at(char ph, std::string_view cat, std::string_view name, std::int64_t ns);
  // Opens an X (complete) trace event from r.t0 to r.t1: begin('X', ...) and its "dur".
  HEDDLE_EXPORT event_out& span(std::string_view cat, std::string_view name, const record& r);
  // Opens one end of a flow at r.t0: an s (start) or f (finish, bound to the enclosing slice) trace event
  // of category "flow" with r.id as its id. Every layer's flows are drawn this way.
  HEDDLE_EXPORT event_out& flow(bool start, std::string_view name, const record& r);
  // A JSON fragment, as it is.
  HEDDLE_EXPORT event_out& raw(std::string_view json);
  // A JSON string: `text` quoted and escaped.
  HEDDLE_EXPORT event_out& str(std::string_view text);
  // A JSON number.
  HEDDLE_EXPORT event_out& num(std::int64_t value);

  event_out(json_out& out, const clock_map& clock, pid_t pid) noexcept : out_(&out), clock_(&clock), pid_(pid) {}
  pid_t tid = 0;  // the track being written

 private:
  json_out* out_;
  const clock_map* clock_;
  pid_t pid_;
  bool first_ = true;
};

// Where a kind's trace events are drawn.
enum class placement : std::uint8_t {
  // On the track of the thread that recorded them.
  thread,
  // Spans that may overlap (operations that wait at once), on lanes beside the recording thread's
  // track, named "<thread's name> <lanes>", "<thread's name> <lanes> 2", ...: first fit by start,
  // so that the spans on a lane are disjoint, as they must be.
  thread_lanes,
  // On tracks of their own after the threads', one set per key (the record's `arg`), whichever
  // thread recorded them: named "<lanes> <key>" (and " <suffix>" when there is one), lanes as above.
  // Tracks of one key come in the order of their kinds' numbers; keys in increasing order.
  keyed_lanes,
};

// A flow's end: a record that starts or ends an arrow from one trace event to another, paired by
// `id`.
enum class flow_end : std::uint8_t { none, start, finish };

// How a kind of record becomes a trace event.
struct kind_format {
  // Writes one record: opens its trace event, adds its fields, closes it. Called by the writer only,
  // one call at a time, when a session stops (its labels still live).
  void (*write)(event_out& out, const record& r) = nullptr;
  placement place = placement::thread;
  const char* lanes = nullptr;   // thread_lanes, keyed_lanes: the tracks' name (a literal)
  const char* suffix = nullptr;  // keyed_lanes: after the key, or nullptr
  // Flows: each start is paired with the next finish of the same family and id in time order, and
  // the pairs are numbered 1, 2, ... (families in the order of their start kinds' numbers). A start
  // or finish whose other end the session cut is dropped, unless `keep_unpaired` (its other end lies
  // in another process's trace: it keeps its id, which must then be at least 2^52, for the merge).
  flow_end flow = flow_end::none;
  kind flow_family = kind::core_count_;  // the family's start kind (for a start, itself)
  bool keep_unpaired = false;
};

// The format of one end of a flow family whose start kind is `family`, drawn on the thread's track.
constexpr kind_format flow_format(void (*write)(event_out&, const record&), flow_end end, kind family,
                                  bool keep_unpaired = false) noexcept {
  kind_format f;
  f.write = write;
  f.flow = end;
  f.flow_family = family;
  f.keep_unpaired = keep_unpaired;
  return f;
}

// Installs `format` for `k`, a layer's kind (layer 1 to 255: not the core's). Thread-safe; meant
// for a library's load. Installing a kind again keeps the first format (a library loaded twice
// installs the same). Returns false, installing nothing, if `k` had another writer (a clash of two
// layers' numbers), is the core's, has no writer, or if 256 kinds are installed already.
HEDDLE_EXPORT bool install_kind(kind k, const kind_format& format) noexcept;

// This process as one of a run of several, as the layer that starts or joins such runs sees it.
struct process_group_member {
  // This process's index in the run (0 is the run's reference: set_clock_offset), >= 0. The trace
  // names the process "<program> node <index>" (unless the session was given a name) and writes
  // the index into otherData.processes[].node.
  long index = -1;
  // HEDDLE_TRACE=FILE, given alike to every process of the run: the file this process writes
  // instead (FILE itself where the run gave each process its own FILE). nullptr: FILE. Called
  // once, when HEDDLE_TRACE's session takes the file: it may clear what an earlier run left.
  std::string (*own_file)(const std::string& base) = nullptr;
  // Run once at the process's exit, after HEDDLE_TRACE's session wrote this process's file (or
  // failed to): where the run's files are joined. `base` is FILE. nullptr: nothing.
  void (*after_exit)(const std::string& base) = nullptr;
};

// Makes this process a member of a run of several. Called once, at the layer's load (before or
// after HEDDLE_TRACE's session started: a session started before writes to own_file(FILE) from
// now, and FILE, which it created and left empty, is removed). Exits the process with status 2
// and a message if that file cannot be created, as a bad HEDDLE_TRACE does.
HEDDLE_EXPORT void join_process_group(const process_group_member& member) noexcept;

}  // namespace heddle::core_detail::trace
