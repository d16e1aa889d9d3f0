// Making the event, event_setup and luminosity_block a module sees, for the processors.
#pragma once

#include "event_state.hpp"
#include "lumi_state.hpp"
#include "heddle/fw/event.hpp"
#include "heddle/fw/event_setup.hpp"

namespace heddle::fw::detail {

struct event_access {
  static event make(event_state& s, const graph& g, std::uint32_t m) noexcept { return event(s, g, m, s.id, s.stream); }
  static event_setup setup(const graph& g, std::uint32_t m) noexcept { return event_setup(g, m); }
  // The lumi module m sees in its begin (`ending` false) or end transition.
  static luminosity_block lumi(lumi_state& s, const graph& g, std::uint32_t m, bool ending) noexcept {
    return luminosity_block(s, g, m, ending);
  }
};

}  // namespace heddle::fw::detail
