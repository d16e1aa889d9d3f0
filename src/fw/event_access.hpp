// SPDX-License-Identifier: Apache-2.0
// Making the event, event_setup, luminosity_block and run a module sees, for the processors.
#pragma once

#include "event_state.hpp"
#include "heddle/fw/event.hpp"
#include "heddle/fw/event_setup.hpp"
#include "heddle/fw/run.hpp"
#include "lumi_state.hpp"

namespace heddle::fw_detail {

struct event_access {
  static event make(event_state& s, const graph& g, std::uint32_t m) noexcept {
    const node& n = g.nodes[m];
    return event(g, m, s.id, s.stream, s.slots, s.made, n.reads.data(), static_cast<std::uint32_t>(n.reads.size()),
                 n.writes.data(), static_cast<std::uint32_t>(n.writes.size()));
  }
  static event_setup setup(const graph& g, std::uint32_t m, es_state* es, std::uint32_t run,
                           std::uint32_t lumi) noexcept {
    return event_setup(g, m, es, run, lumi);
  }
  static event_setup setup(const graph& g, std::uint32_t m, es_state* es, const event_state& s) noexcept {
    return event_setup(g, m, es, s.id.run, s.id.lumi);
  }
  // The lumi module m sees in its begin (`ending` false) or end transition.
  static luminosity_block lumi(lumi_state& s, const graph& g, std::uint32_t m, bool ending) noexcept {
    return luminosity_block(s, g, m, ending);
  }
  // The run module m sees in its begin (`ending` false) or end transition.
  static fw::run run_of(run_state& s, const graph& g, std::uint32_t m, bool ending) noexcept {
    return fw::run(s, g, m, ending);
  }
};

}  // namespace heddle::fw_detail
