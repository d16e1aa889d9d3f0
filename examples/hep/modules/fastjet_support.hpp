// What the job's FastJet modules share: candidates as PseudoJets, ghosts seeded per event, and the
// banner printed once.
//
// Debian builds FastJet without its thread-safety option, and three pieces of its state are
// static (docs/hep.md, "FastJet and threads"): the banner's first-time flag, the random generator
// that places area ghosts, and the counters of its limited warnings. The job's modules never write
// the first two concurrently: the banner is printed from begin_job, before any event, and every
// area takes its ghosts from a per-event seed (GhostedAreaSpec::with_fixed_seed), which copies the
// static generator and never advances it.
#pragma once

#include <cstdint>
#include <vector>

#include <fastjet/AreaDefinition.hh>
#include <fastjet/PseudoJet.hh>

#include "../core/products.hpp"

namespace hep {

// FastJet's banner, once per process: call from a transition (begin_job), never from an event.
void print_fastjet_banner_once();

// Active areas with explicit ghosts up to |y| = ghost_maxrap, one repetition, ghosts of
// `ghost_area`, placed from a generator seeded with `seed` (any value: it is folded into the
// generator's two seeds' ranges).
fastjet::AreaDefinition seeded_active_area(double ghost_maxrap, double ghost_area, std::uint64_t seed);

// The candidates as PseudoJets; user_index is the candidate's position.
std::vector<fastjet::PseudoJet> to_pseudojets(const candidates& c);

four_momentum to_four_momentum(const fastjet::PseudoJet& j) noexcept;

}  // namespace hep
