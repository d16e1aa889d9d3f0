// SPDX-License-Identifier: Apache-2.0
// The active-message layer's kinds of trace record (docs/trace.md, "What is recorded") and the
// flow id that pairs a send with its receipt, across processes. Defined in trace_kinds.cpp beside
// the static object that installs how each becomes a trace event (and joins this process to its
// run's trace: trace_run.cpp): code that records one references that file, so a static link keeps
// the installation.
#pragma once

#include <cstdint>

#include "heddle/core/detail/trace.hpp"

namespace heddle::am_detail::trace_kinds {

// The active-message layer's number among the layers that record (docs/trace.md, "Adding kinds").
inline constexpr std::uint8_t layer = 3;
// X am "send": a frame leaving; name: its kind; sub: the peer; arg: payload bytes; id: message_flow_id.
extern const core_detail::trace::kind message_send;
// X am "receive": a frame delivered; the same fields, sub: the sender.
extern const core_detail::trace::kind message_receive;
// s flow "message", in the send; id: message_flow_id.
extern const core_detail::trace::kind message_begin;
// f flow "message", in the receipt; id: message_flow_id.
extern const core_detail::trace::kind message_end;

// A message's flow id: sender, receiver and the sender's sequence number to that receiver (which
// comes round after 65535: a trace pairs each send with the next receipt of the same id). Bit 52
// set: such ids never meet the writer's own numbering of flows, and stay exact in JSON.
inline std::uint64_t message_flow_id(std::uint32_t from, std::uint32_t to, std::uint16_t sequence) noexcept {
  return std::uint64_t{1} << 52 | std::uint64_t{from & 0xfff} << 28 | std::uint64_t{to & 0xfff} << 16 | sequence;
}

}  // namespace heddle::am_detail::trace_kinds
