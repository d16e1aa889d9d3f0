// SPDX-License-Identifier: Apache-2.0
#include "trace_kinds.hpp"

#include "heddle/core/detail/trace_extension.hpp"
#include "trace_run.hpp"

namespace heddle::am_detail {

namespace trace_kinds {
const core_detail::trace::kind message_send = core_detail::trace::layer_kind(layer, 0);
const core_detail::trace::kind message_receive = core_detail::trace::layer_kind(layer, 1);
const core_detail::trace::kind message_begin = core_detail::trace::layer_kind(layer, 2);
const core_detail::trace::kind message_end = core_detail::trace::layer_kind(layer, 3);
}  // namespace trace_kinds

namespace {

using core_detail::trace::event_out;
using core_detail::trace::kind_format;
using core_detail::trace::record;

// Formatted by hand: the trace JSON, each key beside its value.
// clang-format off
void write_message(event_out& out, const record& r) {
  const bool send = r.k == trace_kinds::message_send;
  out.span("am", send ? "send" : "receive", r)
      .raw(",\"args\":{\"kind\":").str(r.name ? r.name : "?").raw(send ? ",\"to\":" : ",\"from\":").num(r.sub)
      .raw(",\"bytes\":").num(r.arg).raw("}}");
}
// clang-format on
void write_flow(event_out& out, const record& r) { out.flow(r.k == trace_kinds::message_begin, "message", r).raw("}"); }

// A message's flow: its other end is in another process's trace when it crosses processes, so
// an end without its other keeps its id for the merge.
kind_format message_flow(core_detail::trace::flow_end end) {
  return core_detail::trace::flow_format(write_flow, end, trace_kinds::message_begin, /*keep_unpaired=*/true);
}

// At the library's load, before anything records: the kinds' formats, and this process's place in
// a run of several processes (trace_run.cpp).
struct trace_installer {
  trace_installer() {
    core_detail::trace::install_kind(trace_kinds::message_send, kind_format{write_message});
    core_detail::trace::install_kind(trace_kinds::message_receive, kind_format{write_message});
    core_detail::trace::install_kind(trace_kinds::message_begin, message_flow(core_detail::trace::flow_end::start));
    core_detail::trace::install_kind(trace_kinds::message_end, message_flow(core_detail::trace::flow_end::finish));
    join_trace_run();
  }
} am_trace_installed;

}  // namespace

}  // namespace heddle::am_detail
