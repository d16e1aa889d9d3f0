// SPDX-License-Identifier: Apache-2.0
// A session's records as Chrome trace-event JSON (docs/trace.md, "The file").
//
// Times: each record's ticks become steady-clock nanoseconds (integers), printed as microseconds
// with three decimals, so that no rounding can make a nested span stick out of its parent; `dur`
// is the difference of the two integers. Per thread, trace events are sorted by start, a longer span
// before a shorter one that starts with it: an enclosing span precedes what it encloses. Each
// record becomes the trace event its kind's writer writes (kinds.hpp: the core's and the layers').
#include <algorithm>
#include <string>

#include "json_out.hpp"
#include "kinds.hpp"
#include "session.hpp"
#include "tracks.hpp"

namespace heddle::core_detail::trace {

event_out& event_out::begin(char ph, std::string_view cat, std::string_view name, std::uint64_t ticks) {
  return begin_at(ph, cat, name, clock_->to_ns(ticks));
}
event_out& event_out::begin_at(char ph, std::string_view cat, std::string_view name, std::int64_t ns) {
  out_->raw(first_ ? "\n" : ",\n");
  first_ = false;
  out_->raw("{\"ph\":\"").raw(std::string_view(&ph, 1)).raw("\",\"cat\":\"").raw(cat).raw("\",\"name\":").str(name);
  out_->raw(",\"pid\":").num(pid_).raw(",\"tid\":").num(tid).raw(",\"ts\":").micros(ns);
  return *this;
}
event_out& event_out::span(std::string_view cat, std::string_view name, const record& r) {
  begin('X', cat, name, r.t0);
  out_->raw(",\"dur\":").micros(clock_->to_ns(r.t1) - clock_->to_ns(r.t0));
  return *this;
}
event_out& event_out::flow(bool start, std::string_view name, const record& r) {
  begin(start ? 's' : 'f', "flow", name, r.t0);
  out_->raw(start ? "" : ",\"bp\":\"e\"").raw(",\"id\":").num(static_cast<std::int64_t>(r.id));
  return *this;
}
event_out& event_out::raw(std::string_view json) {
  out_->raw(json);
  return *this;
}
event_out& event_out::str(std::string_view text) {
  out_->str(text);
  return *this;
}
event_out& event_out::num(std::int64_t value) {
  out_->num(value);
  return *this;
}

namespace {

std::uint64_t end_ticks(const record& r) { return r.t1 > r.t0 ? r.t1 : r.t0; }

// Sorts a thread's records and pairs its parking: a park that had not ended when the session
// stopped ends at the stop; one that began before the session began starts at its start.
void order(std::vector<record>& rs, const clock_map& clock, std::int64_t stop_ns, std::uint64_t start_ticks) {
  std::stable_sort(rs.begin(), rs.end(), [](const record& a, const record& b) {
    if (a.t0 != b.t0) return a.t0 < b.t0;
    return end_ticks(a) > end_ticks(b);
  });
  int depth = 0;
  bool leading_end = false;
  for (const record& r : rs) {
    if (r.k == kind::park_begin) ++depth;
    if (r.k == kind::park_end && --depth < 0) {
      leading_end = true;
      depth = 0;
    }
  }
  if (leading_end) rs.insert(rs.begin(), record{start_ticks, 0, 0, {nullptr}, kind::park_begin, 0, 0});
  if (depth > 0) {
    // The stop's time in ticks, inverted from the clock's mapping.
    const auto ticks = clock.ticks0 + static_cast<std::uint64_t>(double(stop_ns - clock.ns0) / clock.ns_per_tick);
    rs.push_back(record{std::max(ticks, rs.empty() ? 0 : end_ticks(rs.back())), 0, 0, {nullptr}, kind::park_end, 0, 2});
  }
}

}  // namespace

void write_chrome_trace(std::FILE* f, const char* path, snapshot& s) {
  json_out out(f, path);
  std::uint64_t records = 0, dropped = 0;
  for (auto& t : s.threads) {
    records += t.records.size();
    dropped += t.dropped;
  }
  const kind_table kinds;
  std::vector<track> tracks = lay_out(s, kinds);
  for (auto& t : tracks) order(t.records, s.clock, s.stop_ns, s.clock.ticks0);

  out.raw("{\"traceEvents\":[");
  event_out w(out, s.clock, s.pid);
  w.begin_at('M', "__metadata", "process_name", 0).raw(",\"args\":{\"name\":").str(s.process_name).raw("}}");
  int sort_index = 0;
  for (auto& t : tracks) {
    w.tid = t.tid;
    w.begin_at('M', "__metadata", "thread_name", 0).raw(",\"args\":{\"name\":").str(t.name).raw("}}");
    w.begin_at('M', "__metadata", "thread_sort_index", 0).raw(",\"args\":{\"sort_index\":").num(sort_index++).raw("}}");
    for (const record& r : t.records) {
      if (r.k == kind::park_end && r.arg == 2) {  // closed by the writer at the stop
        w.begin('E', "worker", "parked", r.t0).raw(",\"args\":{\"at_stop\":true}}");
      } else if (const kind_format* f = kinds.find(r.k)) {
        f->write(w, r);
      } else {  // a layer's kind whose library did not install it
        // Formatted by hand: the trace JSON, each key beside its value.
        // clang-format off
        w.begin('i', "trace", "unknown kind", r.t0)
            .raw(",\"s\":\"t\",\"args\":{\"kind\":").num(static_cast<std::uint16_t>(r.k)).raw("}}");
        // clang-format on
      }
    }
    if (t.dropped) {
      const std::int64_t last = t.records.empty() ? s.stop_ns : s.clock.to_ns(end_ticks(t.records.back()));
      // Formatted by hand: the trace JSON, each key beside its value.
      // clang-format off
      w.begin_at('i', "trace", "records dropped", last)
          .raw(",\"s\":\"t\",\"args\":{\"dropped\":").num(static_cast<std::int64_t>(t.dropped)).raw("}}");
      // clang-format on
    }
  }
  out.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"heddle_trace_version\":1,\"clock\":")
      .raw(s.clock.tsc ? "\"tsc\"" : "\"steady\"")
      // Formatted by hand: the trace JSON, each key beside its value.
      // clang-format off
      .raw(",\"records\":").num(static_cast<std::int64_t>(records))
      .raw(",\"dropped\":").num(static_cast<std::int64_t>(dropped))
      .raw(",\"buffer_bytes\":").num(static_cast<std::int64_t>(s.buffer_bytes))
      .raw(",\"start_us\":").micros(s.start_ns).raw(",\"stop_us\":").micros(s.stop_ns)
      .raw(",\"processes\":[{\"pid\":").num(s.pid).raw(",\"name\":").str(s.process_name)
      .raw(",\"node\":").num(s.node).raw(",\"boot_id\":").str(s.boot_id)
      .raw(",\"clock_measured\":").raw(s.clock_measured ? "true" : "false")
      .raw(",\"clock_offset_us\":").micros(s.clock_offset_ns)
      .raw(",\"clock_uncertainty_us\":").micros(s.clock_uncertainty_ns).raw("}],\"threads\":[");
  // clang-format on
  bool first = true;
  for (auto& t : tracks) {
    if (t.synthetic) continue;
    out.raw(first ? "" : ",").raw("{\"pid\":").num(s.pid).raw(",\"tid\":").num(t.tid).raw(",\"name\":").str(t.name);
    out.raw(",\"records\":").num(static_cast<std::int64_t>(t.records.size()));
    out.raw(",\"dropped\":").num(static_cast<std::int64_t>(t.dropped)).raw("}");
    first = false;
  }
  out.raw("]}}\n");
  out.flush();
}

}  // namespace heddle::core_detail::trace
