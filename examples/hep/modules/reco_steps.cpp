// SPDX-License-Identifier: Apache-2.0
#include "reco_steps.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include <fastjet/ClusterSequence.hh>
#include <fastjet/ClusterSequenceArea.hh>
#include <fastjet/Selector.hh>
#include <fastjet/tools/Filter.hh>
#include <fastjet/tools/JetMedianBackgroundEstimator.hh>
#include <fastjet/tools/Subtractor.hh>

#include "../core/seeds.hpp"
#include "fastjet_support.hpp"

namespace hep {

namespace {

std::uint64_t seed_of(std::uint64_t seed, const char* step, const event_key& k) {
  return event_seed(seed, salt(step), k.run, k.lumi, k.event);
}

// Appends `in` rotated by `phi` about the beam, and reflected along it (pz -> -pz) if `reflect`.
void append(particles& out, const interaction& in, double phi, bool reflect, std::uint32_t vertex) {
  const double c = std::cos(phi), s = std::sin(phi);
  for (const particle& p : in) {
    particle r = p;
    r.p.px = p.p.px * c - p.p.py * s;
    r.p.py = p.p.px * s + p.p.py * c;
    if (reflect) r.p.pz = -p.p.pz;
    r.vertex = vertex;
    out.push_back(r);
  }
}

}  // namespace

particles mix_event(const event_library& library, const mixing_settings& s, const event_key& k,
                    mixing_summary& summary) {
  std::mt19937_64 rng(seed_of(s.seed, "hep::MixingModule", k));
  std::uniform_real_distribution<double> azimuth(0, 2 * std::numbers::pi);
  std::uniform_int_distribution<std::size_t> pick_hard(0, library.hard_scatters.size() - 1);
  std::uniform_int_distribution<std::size_t> pick_bias(0, library.minimum_bias.size() - 1);
  summary.hard_scatter = static_cast<std::uint32_t>(pick_hard(rng));
  summary.pileup = s.mu > 0 ? static_cast<std::uint32_t>(std::poisson_distribution<unsigned>(s.mu)(rng)) : 0;
  particles out;
  std::bernoulli_distribution reflect(0.5);
  const double hard_phi = s.rotate_hard_scatter ? azimuth(rng) : 0.0;
  append(out, library.hard_scatters[summary.hard_scatter], hard_phi, s.rotate_hard_scatter && reflect(rng), 0);
  for (std::uint32_t v = 1; v <= summary.pileup; ++v) {
    const interaction& bias = library.minimum_bias[pick_bias(rng)];
    const double phi = azimuth(rng);
    append(out, bias, phi, reflect(rng), v);
  }
  return out;
}

background estimate_rho(const candidates& input, const rho_settings& s, const event_key& k) {
  const fastjet::Selector range = fastjet::SelectorAbsRapMax(s.rap_max) *
                                  (!fastjet::SelectorNHardest(s.exclude_hardest));
  fastjet::JetMedianBackgroundEstimator estimator(range, fastjet::JetDefinition(fastjet::kt_algorithm, s.jet_r),
                                                  seeded_active_area(s.ghosts.max_rap, s.ghosts.area,
                                                                     seed_of(s.ghosts.seed, "hep::RhoEstimator", k)));
  estimator.set_particles(to_pseudojets(input));
  return {estimator.rho(), estimator.sigma()};
}

jets cluster_jets(const candidates& input, double rho, const jet_corrections& corrections, const jet_settings& s,
                  const event_key& k) {
  const fastjet::ClusterSequenceArea cs(to_pseudojets(input),
                                        fastjet::JetDefinition(fastjet::antikt_algorithm, s.jet_r),
                                        seeded_active_area(s.ghosts.max_rap, s.ghosts.area,
                                                           seed_of(s.ghosts.seed, "hep::JetProducer", k)));
  const fastjet::Subtractor subtract(rho);
  jets out;
  for (const fastjet::PseudoJet& j : cs.inclusive_jets(s.raw_pt_min)) {
    if (!(std::abs(j.eta()) < s.eta_max)) continue;
    const fastjet::PseudoJet sub = subtract(j);
    if (!(sub.pt() > 0)) continue;  // subtracted away: a pile-up jet
    const double f = corrections.factor(sub.pt(), sub.eta());
    const jet corrected{to_four_momentum(sub * f), j.area(), j.pt(), f};
    if (corrected.p.pt() >= s.pt_min) out.push_back(corrected);
  }
  std::sort(out.begin(), out.end(), [](const jet& a, const jet& b) { return a.p.pt() > b.p.pt(); });
  return out;
}

fat_jets cluster_fat_jets(const candidates& input, const fat_jet_settings& s) {
  const fastjet::ClusterSequence cs(to_pseudojets(input), fastjet::JetDefinition(fastjet::antikt_algorithm, s.jet_r));
  const fastjet::Filter trimmer(fastjet::JetDefinition(fastjet::kt_algorithm, s.trim_r),
                                fastjet::SelectorPtFractionMin(s.trim_pt_fraction));
  fat_jets out;
  for (const fastjet::PseudoJet& j : fastjet::sorted_by_pt(cs.inclusive_jets(s.pt_min)))
    if (std::abs(j.eta()) < s.eta_max) out.push_back({to_four_momentum(j), trimmer(j).m()});
  return out;
}

bool dijet_selected(const jets& js, double pt_min, double eta_max) noexcept {
  unsigned n = 0;
  for (const jet& j : js)
    if (j.p.pt() >= pt_min && std::abs(j.p.eta()) < eta_max) ++n;
  return n >= 2;
}

bool boosted_selected(const fat_jets& js, double pt_min, double mass_min, double mass_max) noexcept {
  for (const fat_jet& j : js)
    if (j.p.pt() >= pt_min && j.groomed_mass >= mass_min && j.groomed_mass < mass_max) return true;
  return false;
}

}  // namespace hep
