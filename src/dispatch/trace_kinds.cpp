// SPDX-License-Identifier: Apache-2.0
#include "heddle/dispatch/detail/trace_kinds.hpp"

#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::dispatch_detail {

namespace trace_kinds {
const core_detail::trace::kind queue_drain = core_detail::trace::layer_kind(layer, 0);
const core_detail::trace::kind item_begin = core_detail::trace::layer_kind(layer, 1);
const core_detail::trace::kind item_end = core_detail::trace::layer_kind(layer, 2);
}  // namespace trace_kinds

namespace {

using core_detail::trace::event_out;
using core_detail::trace::kind_format;
using core_detail::trace::record;

void write_drain(event_out& out, const record& r) {
  out.span("dispatch", r.name ? r.name : "serial queue", r).raw(",\"args\":{\"items\":").num(r.arg).raw("}}");
}
void write_item(event_out& out, const record& r) { out.flow(r.k == trace_kinds::item_begin, "queue item", r).raw("}"); }

kind_format item_flow(core_detail::trace::flow_end end) {
  return core_detail::trace::flow_format(write_item, end, trace_kinds::item_begin);
}

// Installs the kinds' formats when the library loads, before anything records.
struct kinds_installer {
  kinds_installer() {
    core_detail::trace::install_kind(trace_kinds::queue_drain, kind_format{write_drain});
    core_detail::trace::install_kind(trace_kinds::item_begin, item_flow(core_detail::trace::flow_end::start));
    core_detail::trace::install_kind(trace_kinds::item_end, item_flow(core_detail::trace::flow_end::finish));
  }
} dispatch_kinds_installed;

}  // namespace

}  // namespace heddle::dispatch_detail
