// SPDX-License-Identifier: Apache-2.0
#include "fastjet_support.hpp"

#include <fastjet/ClusterSequence.hh>
#include <fastjet/GhostedAreaSpec.hh>
#include <fastjet/LimitedWarning.hh>

namespace hep {

void print_fastjet_banner_once() {
  // print_banner() prints on its first call only; after this, clusterings only read the flag.
  fastjet::ClusterSequence::print_banner();
}

std::string fastjet_warnings() {
  return fastjet::LimitedWarning::summary();  // "N times: text" per kind of warning issued; "" when none
}

fastjet::AreaDefinition seeded_active_area(double ghost_maxrap, double ghost_area, std::uint64_t seed) {
  // FastJet's BasicRandom<double> takes two seeds, 1 .. 2147483562 and 1 .. 2147483398.
  const std::vector<int> seeds{1 + static_cast<int>(seed % 2147483562u),
                               1 + static_cast<int>((seed >> 32) % 2147483398u)};
  const fastjet::GhostedAreaSpec ghosts(ghost_maxrap, 1, ghost_area);
  return fastjet::AreaDefinition(fastjet::active_area_explicit_ghosts, ghosts.with_fixed_seed(seeds));
}

std::vector<fastjet::PseudoJet> to_pseudojets(const candidates& c) {
  std::vector<fastjet::PseudoJet> out;
  out.reserve(c.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    fastjet::PseudoJet p(c[i].p.px, c[i].p.py, c[i].p.pz, c[i].p.e);
    p.set_user_index(static_cast<int>(i));
    out.push_back(p);
  }
  return out;
}

four_momentum to_four_momentum(const fastjet::PseudoJet& j) noexcept { return {j.px(), j.py(), j.pz(), j.e()}; }

}  // namespace hep
