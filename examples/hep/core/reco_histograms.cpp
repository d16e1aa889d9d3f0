// SPDX-License-Identifier: Apache-2.0
#include "reco_histograms.hpp"

namespace hep {

namespace {
enum index { jet_pt, jet_eta, jet_mass, fat_jet_groomed_mass, rho_index, met_index, n_jets, n_candidates, count };
}

std::vector<atomic_histogram> make_reco_histograms() {
  std::vector<atomic_histogram> h;
  h.reserve(count);
  h.emplace_back("jet_pt", "anti-kt R = 0.4 jets, corrected", "p_T [GeV]", axis{100, 0, 2000});
  h.emplace_back("jet_eta", "anti-kt R = 0.4 jets, corrected", "eta", axis{50, -5, 5});
  h.emplace_back("jet_mass", "anti-kt R = 0.4 jets, corrected", "mass [GeV]", axis{60, 0, 300});
  h.emplace_back("fat_jet_groomed_mass", "anti-kt R = 0.8 jets, trimmed", "trimmed mass [GeV]", axis{60, 0, 300});
  h.emplace_back("rho", "median background density", "rho [GeV per unit area]", axis{50, 0, 250});
  h.emplace_back("met", "missing transverse momentum", "MET [GeV]", axis{50, 0, 500});
  h.emplace_back("n_jets", "anti-kt R = 0.4 jets per event", "jets", axis{60, 0, 60});
  h.emplace_back("n_candidates", "particle-flow candidates per event", "candidates", axis{75, 0, 30000});
  return h;
}

void fill_reco_histograms(std::vector<atomic_histogram>& h, const jets& ak4, const fat_jets& ak8, const background& rho,
                          const missing_et& met, std::size_t candidates) noexcept {
  for (const jet& j : ak4) {
    h[jet_pt].fill(j.p.pt());
    h[jet_eta].fill(j.p.eta());
    h[jet_mass].fill(j.p.mass());
  }
  for (const fat_jet& j : ak8) h[fat_jet_groomed_mass].fill(j.groomed_mass);
  h[rho_index].fill(rho.rho);
  h[met_index].fill(met.met());
  h[n_jets].fill(static_cast<double>(ak4.size()));
  h[n_candidates].fill(static_cast<double>(candidates));
}

}  // namespace hep
