// SPDX-License-Identifier: Apache-2.0
// What the job's FastJet modules share: candidates as PseudoJets, ghosts seeded per event, and the
// banner printed once.
//
// Debian builds FastJet 3.4.0 without its thread-safety option: its shared state is unsynchronised
// (docs/hep.md, "FastJet and threads", has the audit). The static generator that places area
// ghosts, the banner's first-time flag, every LimitedWarning (one global list) and the reference
// counts of fastjet::SharedPtr (not atomic: shared by copies of a Selector, a Filter, an
// explicitly constructed GhostedAreaSpec or AreaDefinition, and the jets of one cluster sequence).
// The job's calls are safe concurrently, with no lock, under these rules, which every step of
// reco_steps.cpp keeps:
//   1. the banner is printed from begin_job, before any event clusters;
//   2. every area takes its ghosts from a per-event seed (with_fixed_seed), which copies the
//      static generator and never advances it; nothing in the process draws unseeded ghosts;
//   3. every Selector, Filter, JetDefinition, area definition and estimator is built inside the
//      event's call, never copied from a shared one;
//   4. one event's FastJet objects stay in its call, which exports plain numbers;
//   5. no call can warn: no input of pt 0, one ghost repetition, kt jets for rho, and a
//      fixed-value Subtractor(rho) (Subtractor(&estimator) warns on every massive jet).
// So no FastJet module needs a shared resource (one::, uses_resource): they are global::.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fastjet/AreaDefinition.hh>
#include <fastjet/PseudoJet.hh>

#include "../core/products.hpp"

namespace hep {

// FastJet's banner, once per process: call from a transition (begin_job), never from an event.
void print_fastjet_banner_once();

// What FastJet's limited warnings recorded ("" if none). Read it only when no event runs (end_job):
// the list is not synchronised. With rule 5 kept it stays empty.
std::string fastjet_warnings();

// Active areas with explicit ghosts up to |y| = ghost_maxrap, one repetition, ghosts of
// `ghost_area`, placed from a generator seeded with `seed` (any value: it is folded into the
// generator's two seeds' ranges).
fastjet::AreaDefinition seeded_active_area(double ghost_maxrap, double ghost_area, std::uint64_t seed);

// The candidates as PseudoJets; user_index is the candidate's position.
std::vector<fastjet::PseudoJet> to_pseudojets(const candidates& c);

four_momentum to_four_momentum(const fastjet::PseudoJet& j) noexcept;

}  // namespace hep
