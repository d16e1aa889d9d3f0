// Making the event and event_setup a module sees, for the processors.
#pragma once

#include "event_state.hpp"
#include "heddle/fw/event.hpp"
#include "heddle/fw/event_setup.hpp"

namespace heddle::fw::detail {

struct event_access {
  static event make(event_state& s, const graph& g, std::uint32_t m) noexcept { return event(s, g, m, s.id, s.stream); }
  static event_setup setup(const graph& g, std::uint32_t m) noexcept { return event_setup(g, m); }
};

}  // namespace heddle::fw::detail
