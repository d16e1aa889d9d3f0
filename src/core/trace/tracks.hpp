// From the threads' records to the tracks a trace shows: each thread's own; for a thread that
// completed operations, its operation lanes — operations overlap (a thousand timers wait at
// once), so they go on lanes where each is disjoint from the next, as spans on a track must be;
// per framework stream, a track of its events and lanes of its modules' prefetches and stalls.
// The completing thread keeps a "publish" span per completion on its own track, in which the
// flows to the successors begin (a flow starts inside a slice, where Perfetto anchors it).
// Flows are paired and numbered; those whose other end the session did not see (it began or ended
// outside it) are dropped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

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
std::vector<track> lay_out(snapshot& s);

}  // namespace heddle::core_detail::trace
