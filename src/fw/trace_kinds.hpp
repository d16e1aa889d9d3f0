// SPDX-License-Identifier: Apache-2.0
// The framework's kinds of trace record (docs/trace.md, "What is recorded"). Defined in
// trace_kinds.cpp beside the static object that installs how each becomes a trace event: code
// that records one references that file, so a static link keeps the installation.
#pragma once

#include <cstdint>

#include "heddle/core/detail/trace.hpp"

namespace heddle::fw_detail::trace_kinds {

// The framework's number among the layers that record (docs/trace.md, "Adding kinds").
inline constexpr std::uint8_t layer = 4;
// X event, on the track of stream `arg`: from the source to the end of the output; id: event
// number; value: run << 32 | lumi.
extern const core_detail::trace::kind event;
// X module, the module's label: its event method (sub 0) or acquire (sub 1); id: event number;
// arg: stream.
extern const core_detail::trace::kind module;
// X module.prefetch: asked for, until its inputs were in; drawn on the stream's lanes.
extern const core_detail::trace::kind module_prefetch;
// X module.stall: ready, until it started (waiting for a queue or a thread); the stream's lanes.
extern const core_detail::trace::kind module_stall;
// X fw, name ("begin run", ...): a transition's modules; id: run; arg: lumi.
extern const core_detail::trace::kind transition;

}  // namespace heddle::fw_detail::trace_kinds
