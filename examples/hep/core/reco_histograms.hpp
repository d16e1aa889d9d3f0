// SPDX-License-Identifier: Apache-2.0
// The job's histograms: which, with what bins, and what one event fills in them. Shared by
// hep::JetHistograms and heddle-bench reco's plain loop.
#pragma once

#include <vector>

#include "histogram.hpp"
#include "products.hpp"

namespace hep {

// jet_pt, jet_eta, jet_mass, fat_jet_groomed_mass, rho, met, n_jets, n_candidates, in that order.
std::vector<atomic_histogram> make_reco_histograms();

// One event's fills: lock-free (atomic_histogram::fill), from any number of threads at once.
void fill_reco_histograms(std::vector<atomic_histogram>& h, const jets& ak4, const fat_jets& ak8, const background& rho,
                          const missing_et& met, std::size_t n_candidates) noexcept;

}  // namespace hep
