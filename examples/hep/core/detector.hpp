// SPDX-License-Identifier: Apache-2.0
// The detector: which generated particles it sees and how well it measures them. A
// particle-flow-like response: inside the tracker a charged particle is a track (momentum
// resolution of a few per mille to a per cent, its vertex known); elsewhere, and for neutral
// particles, calorimeter energy resolution σ/E = a/√E ⊕ b (electromagnetic for photons and
// electrons, hadronic otherwise). Neutrinos are not seen. Plain C++: no FastJet.
#pragma once

#include <cstdint>

#include "products.hpp"

namespace hep {

struct detector_config {
  double calorimeter_eta_max = 4.7;  // acceptance
  double tracker_eta_max = 2.5;
  double hadron_stochastic = 1.0, hadron_constant = 0.05;  // σ/E = a/√E ⊕ b, E in GeV
  double em_stochastic = 0.03, em_constant = 0.005;
  double track_constant = 0.005, track_slope = 1e-4;  // σ(pt)/pt = a ⊕ b·pt, pt in GeV
};
// Throws std::invalid_argument naming the first setting out of range (negative resolutions,
// acceptances not positive, tracker beyond the calorimeter).
void check(const detector_config& c);

// The particle's charge: from its PDG id where it has one; without (pdg_id 0), a deterministic
// assignment from the bits of its momentum, charged two times in three as for the pions that
// dominate these events. Neutrinos: 0.
int charge_of(const particle& p) noexcept;
bool is_neutrino(std::int32_t pdg_id) noexcept;

// The candidates the detector makes of `generated`, in the particles' order (those it does not
// see are skipped). Every random draw comes from `seed`: the same particles and seed give the same
// candidates bit for bit. Cost: linear, two or three normal draws per particle.
candidates detector_response(const particles& generated, const detector_config& c, std::uint64_t seed);

// Charged-hadron subtraction: the candidates except the tracked ones from pile-up vertices.
candidates charged_hadron_subtraction(const candidates& all);

// Minus the vector sum of the candidates' transverse momenta, and their scalar sum.
missing_et missing_transverse_momentum(const candidates& all) noexcept;

}  // namespace hep
