// A session's records as Chrome trace-event JSON (docs/trace.md, "The file").
//
// Times: each record's ticks become steady-clock nanoseconds (integers), printed as microseconds
// with three decimals, so that no rounding can make a nested span stick out of its parent; `dur`
// is the difference of the two integers. Per thread, events are sorted by start, a longer span
// before a shorter one that starts with it: an enclosing span precedes what it encloses.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <system_error>

#include "heddle/core/strategy.hpp"
#include "session.hpp"
#include "tracks.hpp"

namespace heddle::core_detail::trace {

namespace {

class json_out {
 public:
  json_out(std::FILE* f, const char* path) : f_(f), path_(path) { buf_.reserve(1 << 20); }

  json_out& raw(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= (1 << 20)) flush();
    return *this;
  }
  json_out& str(std::string_view s) {
    buf_.push_back('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(c);
      } else if (u < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof esc, "\\u%04x", u);
        buf_.append(esc);
      } else {
        buf_.push_back(c);
      }
    }
    buf_.push_back('"');
    return *this;
  }
  json_out& num(std::int64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, r.ptr);
    return *this;
  }
  // Nanoseconds as microseconds with three decimals.
  json_out& micros(std::int64_t ns) {
    if (ns < 0) {
      buf_.push_back('-');
      ns = -ns;
    }
    num(ns / 1000);
    char frac[4] = {char('0' + ns % 1000 / 100), char('0' + ns % 100 / 10), char('0' + ns % 10), 0};
    buf_.push_back('.');
    buf_.append(frac, 3);
    return *this;
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size())
      throw std::system_error(errno, std::generic_category(), std::string("cannot write ") + path_);
    buf_.clear();
  }

 private:
  std::FILE* f_;
  const char* path_;
  std::string buf_;
};

const char* how_name(std::uint16_t h) {
  switch (static_cast<how>(h)) {
    case how::loop: return "loop";
    case how::nested: return "nested";
    case how::inline_run: return "inline";
    case how::successor: return "successor";
  }
  return "?";
}

const char* strategy_name(std::uint16_t s) {
  switch (static_cast<strategy>(s)) {
    case strategy::normal: return "normal";
    case strategy::express: return "express";
    case strategy::short_task: return "short_task";
    case strategy::asap: return "asap";
  }
  return "?";
}

const char* wait_on_name(std::uint16_t w) {
  switch (static_cast<wait_on>(w)) {
    case wait_on::task: return "task";
    case wait_on::future: return "future";
    case wait_on::group: return "group";
  }
  return "?";
}

struct event_writer {
  json_out& out;
  const clock_map& clock;
  pid_t pid;
  pid_t tid;
  bool first = true;

  json_out& begin(char ph, const char* cat, std::string_view name, std::int64_t ts_ns) {
    out.raw(first ? "\n" : ",\n");
    first = false;
    out.raw("{\"ph\":\"").raw(std::string_view(&ph, 1)).raw("\",\"cat\":\"").raw(cat).raw("\",\"name\":").str(name);
    out.raw(",\"pid\":").num(pid).raw(",\"tid\":").num(tid).raw(",\"ts\":").micros(ts_ns);
    return out;
  }
  void span(const char* cat, std::string_view name, const record& r) {
    const std::int64_t t0 = clock.to_ns(r.t0);
    begin('X', cat, name, t0).raw(",\"dur\":").micros(clock.to_ns(r.t1) - t0);
  }

  void write(const record& r) {
    switch (r.k) {
      case kind::task:
        span("task", r.name ? r.name : "task", r);
        out.raw(",\"args\":{\"how\":\"").raw(how_name(r.sub)).raw("\"");
        if (r.arg) out.raw(",\"stolen_from\":").num(r.arg - 1);
        out.raw("}}");
        return;
      case kind::search:
        span("worker", "search", r);
        out.raw("}");
        return;
      case kind::park_begin:
        begin('B', "worker", "parked", clock.to_ns(r.t0)).raw(",\"args\":{\"kind\":\"").raw(r.sub ? "waiting" : "idle").raw("\"}}");
        return;
      case kind::park_end:
        begin('E', "worker", "parked", clock.to_ns(r.t0)).raw(",\"args\":{\"woken\":").raw(r.arg ? "true" : "false").raw("}}");
        return;
      case kind::wait:
        span("worker", "wait", r);
        out.raw(",\"args\":{\"on\":\"").raw(wait_on_name(r.sub)).raw("\"}}");
        return;
      case kind::block:
        span("worker", "block", r);
        out.raw(",\"args\":{\"on\":\"").raw(wait_on_name(r.sub)).raw("\"}}");
        return;
      case kind::wake:
        begin('i', "worker", "wake", clock.to_ns(r.t0)).raw(",\"s\":\"t\",\"args\":{\"worker\":").num(r.arg).raw("}}");
        return;
      case kind::user_span:
        span("user", r.name ? r.name : "span", r);
        out.raw("}");
        return;
      case kind::user_instant:
        begin('i', "user", r.name ? r.name : "instant", clock.to_ns(r.t0)).raw(",\"s\":\"t\"}");
        return;
      case kind::operation:
        span("async", r.name ? r.name : "operation", r);
        out.raw("}");
        return;
      case kind::publication:
        span("async", "publish", r);
        out.raw(",\"args\":{\"operation\":").str(r.name ? r.name : "operation").raw("}}");
        return;
      case kind::queue_drain:
        span("dispatch", r.name ? r.name : "serial queue", r);
        out.raw(",\"args\":{\"items\":").num(r.arg).raw("}}");
        return;
      case kind::item_begin:
      case kind::item_end:
        begin(r.k == kind::item_begin ? 's' : 'f', "flow", "queue item", clock.to_ns(r.t0))
            .raw(r.k == kind::item_end ? ",\"bp\":\"e\"" : "")
            .raw(",\"id\":").num(static_cast<std::int64_t>(r.id)).raw("}");
        return;
      case kind::module:
      case kind::module_prefetch:
      case kind::module_stall:
        span(r.k == kind::module ? "module" : r.k == kind::module_prefetch ? "module.prefetch" : "module.stall",
             r.name ? r.name : "module", r);
        out.raw(",\"args\":{\"event\":").num(static_cast<std::int64_t>(r.id)).raw(",\"stream\":").num(r.arg);
        if (r.k == kind::module) out.raw(",\"phase\":\"").raw(r.sub ? "acquire" : "produce").raw("\"");
        out.raw("}}");
        return;
      case kind::event: {
        const auto run = static_cast<std::int64_t>(r.value >> 32), lumi = static_cast<std::int64_t>(r.value & 0xffffffffu);
        const std::string name = "event " + std::to_string(run) + ":" + std::to_string(lumi) + ":" + std::to_string(r.id);
        span("event", name, r);
        out.raw(",\"args\":{\"run\":").num(run).raw(",\"lumi\":").num(lumi)
            .raw(",\"event\":").num(static_cast<std::int64_t>(r.id)).raw(",\"stream\":").num(r.arg).raw("}}");
        return;
      }
      case kind::transition:
        span("fw", r.name ? r.name : "transition", r);
        out.raw(",\"args\":{\"run\":").num(static_cast<std::int64_t>(r.id)).raw(",\"lumi\":").num(r.arg).raw("}}");
        return;
      case kind::message_send:
      case kind::message_receive: {
        const bool send = r.k == kind::message_send;
        span("am", send ? "send" : "receive", r);
        out.raw(",\"args\":{\"kind\":").str(r.name ? r.name : "?").raw(send ? ",\"to\":" : ",\"from\":").num(r.sub)
            .raw(",\"bytes\":").num(r.arg).raw("}}");
        return;
      }
      case kind::message_begin:
      case kind::message_end:
        begin(r.k == kind::message_begin ? 's' : 'f', "flow", "message", clock.to_ns(r.t0))
            .raw(r.k == kind::message_end ? ",\"bp\":\"e\"" : "")
            .raw(",\"id\":").num(static_cast<std::int64_t>(r.id)).raw("}");
        return;
      case kind::flow_begin:
      case kind::flow_end:
        begin(r.k == kind::flow_begin ? 's' : 'f', "flow", "successor", clock.to_ns(r.t0))
            .raw(r.k == kind::flow_end ? ",\"bp\":\"e\"" : "")
            .raw(",\"id\":").num(static_cast<std::int64_t>(r.id))
            .raw(",\"args\":{\"strategy\":\"").raw(strategy_name(r.sub)).raw("\"}}");
        return;
      case kind::count_: break;
    }
  }
};

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
  std::vector<track> tracks = lay_out(s);
  for (auto& t : tracks) order(t.records, s.clock, s.stop_ns, s.clock.ticks0);

  out.raw("{\"traceEvents\":[");
  event_writer w{out, s.clock, s.pid, 0};
  w.begin('M', "__metadata", "process_name", 0).raw(",\"args\":{\"name\":").str(s.process_name).raw("}}");
  int sort_index = 0;
  for (auto& t : tracks) {
    w.tid = t.tid;
    w.begin('M', "__metadata", "thread_name", 0).raw(",\"args\":{\"name\":").str(t.name).raw("}}");
    w.begin('M', "__metadata", "thread_sort_index", 0).raw(",\"args\":{\"sort_index\":").num(sort_index++).raw("}}");
    for (const record& r : t.records) {
      if (r.k == kind::park_end && r.arg == 2) {  // closed by the writer at the stop
        w.begin('E', "worker", "parked", s.clock.to_ns(r.t0)).raw(",\"args\":{\"at_stop\":true}}");
      } else {
        w.write(r);
      }
    }
    if (t.dropped) {
      const std::int64_t last = t.records.empty() ? s.stop_ns : s.clock.to_ns(end_ticks(t.records.back()));
      w.begin('i', "trace", "records dropped", last)
          .raw(",\"s\":\"t\",\"args\":{\"dropped\":").num(static_cast<std::int64_t>(t.dropped)).raw("}}");
    }
  }
  out.raw("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"heddle_trace_version\":1,\"clock\":")
      .raw(s.clock.tsc ? "\"tsc\"" : "\"steady\"")
      .raw(",\"records\":").num(static_cast<std::int64_t>(records))
      .raw(",\"dropped\":").num(static_cast<std::int64_t>(dropped))
      .raw(",\"buffer_bytes\":").num(static_cast<std::int64_t>(s.buffer_bytes))
      .raw(",\"start_us\":").micros(s.start_ns).raw(",\"stop_us\":").micros(s.stop_ns)
      .raw(",\"processes\":[{\"pid\":").num(s.pid).raw(",\"name\":").str(s.process_name)
      .raw(",\"node\":").num(s.node).raw(",\"boot_id\":").str(s.boot_id)
      .raw(",\"clock_measured\":").raw(s.clock_measured ? "true" : "false")
      .raw(",\"clock_offset_us\":").micros(s.clock_offset_ns)
      .raw(",\"clock_uncertainty_us\":").micros(s.clock_uncertainty_ns).raw("}],\"threads\":[");
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
