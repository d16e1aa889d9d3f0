// SPDX-License-Identifier: Apache-2.0
// The async layer's kinds of trace record (docs/trace.md, "What is recorded"), and the span an
// operation's record keeps. The kinds are defined in trace_kinds.cpp beside the static object that
// installs how each becomes a trace event: code that records one references that file, so a static
// link keeps the installation with it.
#pragma once

#include <cstdint>

#include "heddle/core/detail/trace.hpp"
#include "heddle/core/export.hpp"

namespace heddle::async_detail {

namespace trace_kinds {
// The async layer's number among the layers that record (docs/trace.md, "Adding kinds").
inline constexpr std::uint8_t layer = 1;
// X async, name: an operation from its start to its completion, recorded by the thread that
// completed it, drawn on that thread's operation lanes.
HEDDLE_EXPORT extern const core_detail::trace::kind operation;
// X async "publish": that thread publishing the result (continuations, inline successors, the
// flows they begin), on its own track; name: the operation.
HEDDLE_EXPORT extern const core_detail::trace::kind publication;
}  // namespace trace_kinds

// What an operation's record keeps to be traced (op_state): its start, and what it is. Off, begin
// is 0 and ending costs a test.
struct operation_span {
  std::uint64_t begin = 0;
  const char* name = nullptr;

  void start(const char* what) noexcept {
    if (core_detail::trace::on()) [[unlikely]] {
      begin = core_detail::trace::now();
      name = what;
    }
  }
  // Publishes the result with `publish` (which may free the record holding this span), recording
  // the operation up to now and the publication itself.
  template <class Publish>
  void end(Publish&& publish) noexcept {
    const std::uint64_t t0 = begin;
    if (!t0) [[likely]]
      return publish();
    const char* what = name;
    const std::uint64_t t1 = core_detail::trace::now();
    core_detail::trace::emit_span(trace_kinds::operation, t0, t1, what);
    publish();
    core_detail::trace::emit_span(trace_kinds::publication, t1, core_detail::trace::now(), what);
  }
};

}  // namespace heddle::async_detail
