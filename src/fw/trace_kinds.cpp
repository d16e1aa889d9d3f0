// SPDX-License-Identifier: Apache-2.0
#include "trace_kinds.hpp"

#include <string>

#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::fw_detail {

namespace trace_kinds {
const core_detail::trace::kind event = core_detail::trace::layer_kind(layer, 0);
const core_detail::trace::kind module = core_detail::trace::layer_kind(layer, 1);
const core_detail::trace::kind module_prefetch = core_detail::trace::layer_kind(layer, 2);
const core_detail::trace::kind module_stall = core_detail::trace::layer_kind(layer, 3);
const core_detail::trace::kind transition = core_detail::trace::layer_kind(layer, 4);
}  // namespace trace_kinds

namespace {

using core_detail::trace::event_out;
using core_detail::trace::kind_format;
using core_detail::trace::placement;
using core_detail::trace::record;

// Formatted by hand: the trace JSON, each key beside its value.
// clang-format off
void write_module(event_out& out, const record& r) {
  const char* cat = r.k == trace_kinds::module ? "module" : r.k == trace_kinds::module_prefetch ? "module.prefetch" : "module.stall";
  out.span(cat, r.name ? r.name : "module", r)
      .raw(",\"args\":{\"event\":").num(static_cast<std::int64_t>(r.id)).raw(",\"stream\":").num(r.arg);
  if (r.k == trace_kinds::module) out.raw(",\"phase\":\"").raw(r.sub ? "acquire" : "produce").raw("\"");
  out.raw("}}");
}
void write_event(event_out& out, const record& r) {
  const auto run = static_cast<std::int64_t>(r.value >> 32), lumi = static_cast<std::int64_t>(r.value & 0xffffffffu);
  const std::string name = "event " + std::to_string(run) + ":" + std::to_string(lumi) + ":" + std::to_string(r.id);
  out.span("event", name, r)
      .raw(",\"args\":{\"run\":").num(run).raw(",\"lumi\":").num(lumi)
      .raw(",\"event\":").num(static_cast<std::int64_t>(r.id)).raw(",\"stream\":").num(r.arg).raw("}}");
}
void write_transition(event_out& out, const record& r) {
  out.span("fw", r.name ? r.name : "transition", r)
      .raw(",\"args\":{\"run\":").num(static_cast<std::int64_t>(r.id)).raw(",\"lumi\":").num(r.arg).raw("}}");
}
// clang-format on

// On the tracks of stream `arg` ("stream N"), or its modules' lanes ("stream N modules").
kind_format per_stream(void (*write)(event_out&, const record&), const char* suffix) {
  kind_format f{write};
  f.place = placement::keyed_lanes;
  f.lanes = "stream";
  f.suffix = suffix;
  return f;
}

// Installs the kinds' formats when the library loads, before anything records.
struct kinds_installer {
  kinds_installer() {
    core_detail::trace::install_kind(trace_kinds::event, per_stream(write_event, nullptr));
    core_detail::trace::install_kind(trace_kinds::module, kind_format{write_module});
    core_detail::trace::install_kind(trace_kinds::module_prefetch, per_stream(write_module, "modules"));
    core_detail::trace::install_kind(trace_kinds::module_stall, per_stream(write_module, "modules"));
    core_detail::trace::install_kind(trace_kinds::transition, kind_format{write_transition});
  }
} fw_kinds_installed;

}  // namespace

}  // namespace heddle::fw_detail
