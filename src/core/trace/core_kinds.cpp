// SPDX-License-Identifier: Apache-2.0
// The core's kinds of record as trace events (docs/trace.md, "What is recorded"): tasks, the
// workers' searching, parking, waiting and waking, the program's own spans and instants, and the
// flows from a completion to the successor it released.
#include <string_view>

#include "heddle/core/strategy.hpp"
#include "kinds.hpp"

namespace heddle::core_detail::trace {

namespace {

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

// Formatted by hand: the trace JSON, each key beside its value.
// clang-format off
void write_task(event_out& out, const record& r) {
  out.span("task", r.name ? r.name : "task", r).raw(",\"args\":{\"how\":\"").raw(how_name(r.sub)).raw("\"");
  if (r.arg) out.raw(",\"stolen_from\":").num(r.arg - 1);
  out.raw("}}");
}
void write_search(event_out& out, const record& r) { out.span("worker", "search", r).raw("}"); }
void write_park_begin(event_out& out, const record& r) {
  out.begin('B', "worker", "parked", r.t0).raw(",\"args\":{\"kind\":\"").raw(r.sub ? "waiting" : "idle").raw("\"}}");
}
void write_park_end(event_out& out, const record& r) {
  out.begin('E', "worker", "parked", r.t0).raw(",\"args\":{\"woken\":").raw(r.arg ? "true" : "false").raw("}}");
}
void write_wait(event_out& out, const record& r) {
  out.span("worker", r.k == kind::wait ? "wait" : "block", r).raw(",\"args\":{\"on\":\"").raw(wait_on_name(r.sub)).raw("\"}}");
}
void write_wake(event_out& out, const record& r) {
  out.begin('i', "worker", "wake", r.t0).raw(",\"s\":\"t\",\"args\":{\"worker\":").num(r.arg).raw("}}");
}
void write_user_span(event_out& out, const record& r) { out.span("user", r.name ? r.name : "span", r).raw("}"); }
void write_user_instant(event_out& out, const record& r) {
  out.begin('i', "user", r.name ? r.name : "instant", r.t0).raw(",\"s\":\"t\"}");
}
void write_flow(event_out& out, const record& r) {
  out.flow(r.k == kind::flow_begin, "successor", r)
      .raw(",\"args\":{\"strategy\":\"").raw(strategy_name(r.sub)).raw("\"}}");
}
// clang-format on

constexpr kind_format on_thread(void (*write)(event_out&, const record&)) {
  kind_format f;
  f.write = write;
  return f;
}
constexpr kind_format successor_flow(flow_end end) { return flow_format(write_flow, end, kind::flow_begin); }

// Indexed by kind.
// Formatted by hand: a table, one row a line.
// clang-format off
constexpr kind_format formats[] = {
    on_thread(write_task),          // task
    on_thread(write_search),        // search
    on_thread(write_park_begin),    // park_begin
    on_thread(write_park_end),      // park_end
    on_thread(write_wait),          // wait
    on_thread(write_wait),          // block
    on_thread(write_wake),          // wake
    on_thread(write_user_span),     // user_span
    on_thread(write_user_instant),  // user_instant
    successor_flow(flow_end::start),   // flow_begin
    successor_flow(flow_end::finish),  // flow_end
};
// clang-format on
static_assert(std::size(formats) == static_cast<std::size_t>(kind::core_count_),
              "a format for each of the core's kinds");

}  // namespace

const kind_format& core_format(kind k) noexcept { return formats[static_cast<std::uint16_t>(k)]; }

}  // namespace heddle::core_detail::trace
