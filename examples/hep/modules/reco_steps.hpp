// SPDX-License-Identifier: Apache-2.0
// The job's physics, step by step, as plain functions: what each module does for one event,
// without the framework. The modules read their settings from their parameters and call these;
// heddle-bench reco calls the same in a plain serial loop to measure what the framework costs.
// Every random draw is seeded from the event's (run, lumi, event) and the step's salt (seeds.hpp),
// so a step's result depends on nothing else.
#pragma once

#include <cstdint>

#include "../core/event_file.hpp"
#include "../core/jet_corrections.hpp"
#include "../core/products.hpp"

namespace hep {

// Which event: the seeds' inputs.
struct event_key {
  std::uint32_t run = 1, lumi = 1;
  std::uint64_t event = 0;
};

struct mixing_settings {
  double mu = 50;
  std::uint64_t seed = 1;
  bool rotate_hard_scatter = true;
};
// One hard scatter and Poisson(mu) minimum-bias interactions from `library`, each rotated by a
// random azimuth and reflected along the beam half of the time (pp collisions are symmetric under
// z -> -z; from libraries of a few dozen interactions a fluctuation on one side would otherwise
// come back in every event), pile-up tagged with vertices 1, 2, ...; the hard scatter is rotated
// and reflected only with rotate_hard_scatter. `summary` says what was drawn.
particles mix_event(const event_library& library, const mixing_settings& s, const event_key& k,
                    mixing_summary& summary);

// Area ghosts: up to |y| = max_rap, of `area` each, placed from the step's per-event seed.
struct ghost_settings {
  double max_rap = 5.0, area = 0.01;
  std::uint64_t seed = 1;
};

struct rho_settings {
  double jet_r = 0.4, rap_max = 4.5;
  unsigned exclude_hardest = 2;
  ghost_settings ghosts;
};
// FastJet's JetMedianBackgroundEstimator: kt jets of jet_r with active areas, |y| < rap_max, the
// exclude_hardest hardest left out.
background estimate_rho(const candidates& input, const rho_settings& s, const event_key& k);

struct jet_settings {
  double jet_r = 0.4, raw_pt_min = 5, pt_min = 20, eta_max = 4.7;
  ghost_settings ghosts;
};
// Anti-kt jets with active areas (raw pt >= raw_pt_min, |eta| < eta_max), each subtracted with
// rho × area (FastJet's Subtractor; jets subtracted away are dropped), then corrected by
// `corrections`; those with corrected pt >= pt_min, by decreasing pt.
jets cluster_jets(const candidates& input, double rho, const jet_corrections& corrections, const jet_settings& s,
                  const event_key& k);

struct fat_jet_settings {
  double jet_r = 0.8, pt_min = 200, eta_max = 2.5, trim_r = 0.2, trim_pt_fraction = 0.05;
};
// Anti-kt jets (pt >= pt_min, |eta| < eta_max), by decreasing pt, with their trimmed masses
// (kt subjets of trim_r keeping those above trim_pt_fraction of the jet's pt).
fat_jets cluster_fat_jets(const candidates& input, const fat_jet_settings& s);

// The selections: two jets with pt >= pt_min and |eta| < eta_max; a fat jet with pt >= pt_min
// and trimmed mass in [mass_min, mass_max).
bool dijet_selected(const jets& j, double pt_min, double eta_max) noexcept;
bool boosted_selected(const fat_jets& j, double pt_min, double mass_min, double mass_max) noexcept;

}  // namespace hep
