// SPDX-License-Identifier: Apache-2.0
#include "trace_kinds.hpp"

#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::async_detail {

namespace trace_kinds {
const core_detail::trace::kind operation = core_detail::trace::layer_kind(layer, 0);
const core_detail::trace::kind publication = core_detail::trace::layer_kind(layer, 1);
}  // namespace trace_kinds

namespace {

using core_detail::trace::event_out;
using core_detail::trace::kind_format;
using core_detail::trace::record;

void write_operation(event_out& out, const record& r) { out.span("async", r.name ? r.name : "operation", r).raw("}"); }
void write_publication(event_out& out, const record& r) {
  out.span("async", "publish", r).raw(",\"args\":{\"operation\":").str(r.name ? r.name : "operation").raw("}}");
}

// Installs the kinds' formats when the library loads, before anything records.
struct kinds_installer {
  kinds_installer() {
    kind_format operation{write_operation};
    operation.place = core_detail::trace::placement::thread_lanes;
    operation.lanes = "operations";
    core_detail::trace::install_kind(trace_kinds::operation, operation);
    core_detail::trace::install_kind(trace_kinds::publication, kind_format{write_publication});
  }
} async_kinds_installed;

}  // namespace

}  // namespace heddle::async_detail
