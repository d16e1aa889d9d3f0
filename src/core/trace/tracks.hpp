// SPDX-License-Identifier: Apache-2.0
// From the threads' records to the tracks a trace shows, as each kind's format places it
// (heddle/core/detail/trace_extension.hpp): each thread's own track; beside it, lanes of the spans
// of kinds that overlap (a thousand operations wait at once), where each is disjoint from the
// next, as spans on a track must be; after the threads, tracks per key (the record's arg) for kinds
// drawn apart from the thread that recorded them. Flows are paired and numbered; those whose other
// end the session did not see (it began or ended outside it) are dropped, but for the kinds that
// keep them for a merge with other processes' traces.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kinds.hpp"
#include "session.hpp"

namespace heddle::core_detail::trace {

struct track {
  pid_t tid = 0;  // the thread's, or a synthetic one (first_synthetic_tid and up) for a lane
  std::string name;
  std::vector<record> records;  // sorted by the writer
  std::uint64_t dropped = 0;    // the thread's, on its own track
  bool synthetic = false;
};

// Synthetic track ids start here: above any Linux thread id (at most 2^22).
constexpr pid_t first_synthetic_tid = 1 << 30;

// Consumes the snapshot's records. Tracks come in the order to show them: each thread (by id)
// followed by its lanes.
std::vector<track> lay_out(snapshot& s, const kind_table& kinds);

}  // namespace heddle::core_detail::trace
