// SPDX-License-Identifier: Apache-2.0
// Jet energy corrections: a factor per (|η|, pt) bin that scales a pile-up-subtracted jet to the
// particle level, as conditions data valid for an interval of runs (CMS's JetCorrectionsRecord).
// The table comes from the conditions file's payload (examples/hep/conditions.json).
#pragma once

#include <string>
#include <vector>

namespace hep {

// The conditions record the corrections belong to.
struct JetCorrectionsRecord {};

class jet_corrections {
 public:
  // |η| bin edges (ascending, from 0), pt bin edges (ascending, GeV) and the factors, |η|-major:
  // factors[i * (pt bins) + j] for |η| bin i and pt bin j. Throws std::invalid_argument naming
  // what is wrong (fewer than two edges, edges not ascending, a factor count other than
  // (|η| bins) × (pt bins), a factor not positive).
  jet_corrections(std::vector<double> abs_eta_edges, std::vector<double> pt_edges, std::vector<double> factors);

  // The factor for a jet of `pt` and `eta`; beyond the table the nearest bin's. Two binary searches.
  double factor(double pt, double eta) const noexcept;

  std::size_t eta_bins() const noexcept { return eta_edges_.size() - 1; }
  std::size_t pt_bins() const noexcept { return pt_edges_.size() - 1; }

 private:
  std::vector<double> eta_edges_, pt_edges_, factors_;
};

}  // namespace hep
