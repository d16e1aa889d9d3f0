// SPDX-License-Identifier: Apache-2.0
#include "detector.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "seeds.hpp"

namespace hep {

void check(const detector_config& c) {
  auto need = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("detector: ") + what);
  };
  need(c.calorimeter_eta_max > 0, "calorimeterEtaMax must be positive");
  need(c.tracker_eta_max > 0 && c.tracker_eta_max <= c.calorimeter_eta_max,
       "trackerEtaMax must be positive and at most calorimeterEtaMax");
  need(c.hadron_stochastic >= 0 && c.hadron_constant >= 0 && c.em_stochastic >= 0 && c.em_constant >= 0 &&
           c.track_constant >= 0 && c.track_slope >= 0,
       "resolutions must not be negative");
}

bool is_neutrino(std::int32_t id) noexcept {
  const int a = std::abs(id);
  return a == 12 || a == 14 || a == 16;
}

int charge_of(const particle& p) noexcept {
  if (p.pdg_id == 0) {
    const std::uint64_t h = mix(std::bit_cast<std::uint64_t>(p.p.px), std::bit_cast<std::uint64_t>(p.p.pz));
    return static_cast<int>(h % 3) - 1;  // -1, 0, +1 each a third of the time
  }
  const int id = p.pdg_id, a = std::abs(id), sign = id > 0 ? 1 : -1;
  // Formatted by hand: a table, one row a line.
  // clang-format off
  switch (a) {
    case 11: case 13: case 15:  // leptons: the particle is negative
      return -sign;
    case 211: case 321: case 411: case 431: case 521: case 2212: case 3222: case 4122: case 213: case 323:
      return sign;
    case 3112: case 3312: case 3334:
      return -sign;
    default:
      return 0;
  }
  // clang-format on
}

namespace {

bool electromagnetic(std::int32_t id) noexcept {
  const int a = std::abs(id);
  return a == 22 || a == 11 || a == 111;
}

// A positive factor near 1 with relative spread `sigma`: the measured over the true value.
double smear(std::mt19937_64& rng, std::normal_distribution<double>& gauss, double sigma) {
  for (int tries = 0; tries < 16; ++tries) {
    const double f = 1 + sigma * gauss(rng);
    if (f > 0) return f;
  }
  return 1;  // a resolution above ~100 % would keep drawing negative energies: measure it as true
}

}  // namespace

candidates detector_response(const particles& generated, const detector_config& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  candidates out;
  out.reserve(generated.size());
  for (const particle& g : generated) {
    if (is_neutrino(g.pdg_id)) continue;
    const double eta = g.p.eta();
    if (!(std::abs(eta) < c.calorimeter_eta_max)) continue;
    candidate cand;
    cand.vertex = g.vertex;
    cand.charge = static_cast<std::int8_t>(charge_of(g));
    cand.tracked = cand.charge != 0 && std::abs(eta) < c.tracker_eta_max;
    double sigma;
    if (cand.tracked) {
      const double pt = g.p.pt();
      sigma = std::hypot(c.track_constant, c.track_slope * pt);
    } else {
      const double e = std::max(g.p.e, 1e-3);
      const double a = electromagnetic(g.pdg_id) ? c.em_stochastic : c.hadron_stochastic;
      const double b = electromagnetic(g.pdg_id) ? c.em_constant : c.hadron_constant;
      sigma = std::hypot(a / std::sqrt(e), b);
    }
    const double f = smear(rng, gauss, sigma);
    cand.p = {g.p.px * f, g.p.py * f, g.p.pz * f, g.p.e * f};
    out.push_back(cand);
  }
  return out;
}

candidates charged_hadron_subtraction(const candidates& all) {
  candidates out;
  out.reserve(all.size());
  for (const candidate& c : all)
    if (!(c.tracked && c.vertex != 0)) out.push_back(c);
  return out;
}

missing_et missing_transverse_momentum(const candidates& all) noexcept {
  missing_et m;
  for (const candidate& c : all) {
    m.mex -= c.p.px;
    m.mey -= c.p.py;
    m.sum_et += c.p.pt();
  }
  return m;
}

}  // namespace hep
