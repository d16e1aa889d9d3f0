// SPDX-License-Identifier: Apache-2.0
// The run of several processes this process is a member of, once a layer above said so
// (join_process_group, heddle/core/detail/trace_extension.hpp): read by the session (the process's
// index in the trace) and by HEDDLE_TRACE's session (its file, what to do at exit).
#pragma once

#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::core_detail::trace {

// The member joined, or one with index -1 and no hooks.
process_group_member joined_group() noexcept;

}  // namespace heddle::core_detail::trace
