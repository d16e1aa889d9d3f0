// SPDX-License-Identifier: Apache-2.0
// The dispatch layer's kinds of trace record (docs/trace.md, "What is recorded"). Defined in
// src/dispatch/trace_kinds.cpp beside the static object that installs how each becomes a trace
// event: code that records one references that file, so a static link keeps the installation.
#pragma once

#include <cstdint>

#include "heddle/core/detail/trace.hpp"
#include "heddle/core/export.hpp"

namespace heddle::dispatch_detail::trace_kinds {

// The dispatch layer's number among the layers that record (docs/trace.md, "Adding kinds").
inline constexpr std::uint8_t layer = 2;
// X dispatch, the queue's label: items run back to back by one owner; arg: items.
HEDDLE_EXPORT extern const core_detail::trace::kind queue_drain;
// s flow "queue item": a sampled item was enqueued; id: the item's address.
HEDDLE_EXPORT extern const core_detail::trace::kind item_begin;
// f flow "queue item": it started running; id: the item's address.
HEDDLE_EXPORT extern const core_detail::trace::kind item_end;

}  // namespace heddle::dispatch_detail::trace_kinds
