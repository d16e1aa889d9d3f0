// SPDX-License-Identifier: Apache-2.0
// A layer of the tests' own, for the trace recorder's extension points
// (heddle/core/detail/trace_extension.hpp), started by the trace tests with HEDDLE_TRACE=FILE. In
// main, after HEDDLE_TRACE's session started (as a shared library loaded after the core joins),
// it installs two kinds and joins a run of several processes as node 3: its trace goes to
// FILE.member.json, and at exit it writes FILE.after. Then it records three "test" spans on the
// tracks of keys 7 and 9, the start of a flow whose other end another process would hold, and one
// record of a kind nobody installed.
#include <cstdio>
#include <heddle/core/detail/trace_extension.hpp>
#include <string>

namespace {

namespace trace = heddle::core_detail::trace;

constexpr std::uint8_t test_layer = 200;
const trace::kind test_span = trace::layer_kind(test_layer, 0);
const trace::kind test_flow = trace::layer_kind(test_layer, 1);

void write_span(trace::event_out& out, const trace::record& r) {
  out.span("test", r.name, r).raw(",\"args\":{\"key\":").num(r.arg).raw("}}");
}
void write_flow(trace::event_out& out, const trace::record& r) {
  out.begin('s', "flow", "test", r.t0).raw(",\"id\":").num(static_cast<std::int64_t>(r.id)).raw("}");
}

std::string member_file(const std::string& base) { return base + ".member.json"; }
void after_exit(const std::string& base) {
  if (std::FILE* f = std::fopen((base + ".after").c_str(), "w")) {
    std::fputs(base.c_str(), f);
    std::fclose(f);
  }
}

}  // namespace

int main() {
  trace::kind_format span{write_span};
  span.place = trace::placement::keyed_lanes;
  span.lanes = "key";
  trace::kind_format flow{write_flow};
  flow.flow = trace::flow_end::start;
  flow.flow_family = test_flow;
  flow.keep_unpaired = true;
  if (!trace::install_kind(test_span, span) || !trace::install_kind(test_flow, flow)) return 3;
  if (trace::install_kind(test_span, flow)) return 4;  // another writer for a kind installed: refused
  trace::process_group_member member;
  member.index = 3;
  member.own_file = member_file;
  member.after_exit = after_exit;
  trace::join_process_group(member);

  const std::uint64_t t0 = trace::now();
  trace::emit_span(test_span, t0, t0 + 1000, "one", 0, 7);
  trace::emit_span(test_span, t0 + 500, t0 + 1500, "two", 0, 7);  // overlaps "one": a second lane
  trace::emit_span(test_span, t0 + 2000, t0 + 3000, "three", 0, 9);
  trace::emit_instant(test_flow, nullptr, 0, 0, std::uint64_t{1} << 52 | 5);
  trace::emit_instant(trace::layer_kind(test_layer + 1, 0));
}
