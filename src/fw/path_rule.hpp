// SPDX-License-Identifier: Apache-2.0
// Which modules run for an event, as far as paths decide it: one rule for the single-threaded
// processor (reference.cpp), the threaded one (module_scheduler.cpp) and the dependency bound
// (analysis.cpp), so that the three cannot disagree. A path asks for its members in order; each
// decides whether the event passes (a filter by its result, any other module always); the first
// that rejects ends the path, and a path whose last member passed passed. Once every path of the event is done, each
// output module on an end path runs if it writes the event (selected()).
#pragma once

#include <cstdint>

#include "graph.hpp"

namespace heddle::fw_detail {

// Where stepping a path left it.
enum class path_state : std::uint8_t {
  waiting,   // at a filter that has not decided yet: its decision goes on with resume_path
  passed,    // every filter passed
  rejected,  // a filter rejected the event
};

// Steps path `p` on from its k-th member. `walker` is the event, as each processor keeps it:
//   walker.ask(f)         asks for filter f (nothing if it was asked for already);
//   walker.decided(f, k)  whether f, the path's k-th member, has its result now; false when it
//                         will decide later and then go on with resume_path(p, k, result, walker);
//   walker.passes(f)      whether f passed the event, once decided.
// Returns at the first filter that rejects or has not decided yet, or after the last. Always
// inlined, as the loop it replaces was: the threaded processor steps paths on its hot path, and a
// call per step there cost it about 5 % of its events/s on the high-pileup configuration.
template <class Walker>
[[gnu::always_inline]] inline path_state step_path(const path& p, std::uint32_t k, Walker&& walker) {
  for (const auto end = static_cast<std::uint32_t>(p.members.size()); k < end; ++k) {
    const std::uint32_t f = p.members[k];
    walker.ask(f);
    if (!walker.decided(f, k)) return path_state::waiting;
    if (!walker.passes(f)) return path_state::rejected;
  }
  return path_state::passed;
}

// The k-th member of path `p`, where step_path left the path waiting, decided (`pass`): the path
// ends there or steps on.
template <class Walker>
[[gnu::always_inline]] inline path_state resume_path(const path& p, std::uint32_t k, bool pass, Walker&& walker) {
  return pass ? step_path(p, k + 1, walker) : path_state::rejected;
}

// An output module writes an event when it selects no path, or when one it selects passed
// (`passed`: per path, non-zero if it passed).
inline bool selected(const node& out, const std::uint8_t* passed) noexcept {
  if (out.select_paths.empty()) return true;
  for (std::uint32_t p : out.select_paths)
    if (passed[p]) return true;
  return false;
}

}  // namespace heddle::fw_detail
