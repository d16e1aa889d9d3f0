// SPDX-License-Identifier: Apache-2.0
#include "jet_corrections.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace hep {

namespace {

void check_edges(const std::vector<double>& edges, const char* name) {
  if (edges.size() < 2) throw std::invalid_argument(std::string(name) + ": needs at least two edges (one bin)");
  for (std::size_t i = 0; i < edges.size(); ++i)
    if (!std::isfinite(edges[i]) || (i > 0 && !(edges[i - 1] < edges[i])))
      throw std::invalid_argument(std::string(name) + ": edges must be finite and ascending (at [" + std::to_string(i) +
                                  "])");
}

// The bin of x among `edges`, clamped to the first and last bins.
std::size_t bin(const std::vector<double>& edges, double x) noexcept {
  const auto at = std::upper_bound(edges.begin() + 1, edges.end() - 1, x);
  return static_cast<std::size_t>(at - (edges.begin() + 1));
}

}  // namespace

jet_corrections::jet_corrections(std::vector<double> eta_edges, std::vector<double> pt_edges,
                                 std::vector<double> factors)
    : eta_edges_(std::move(eta_edges)), pt_edges_(std::move(pt_edges)), factors_(std::move(factors)) {
  check_edges(eta_edges_, "etaEdges");
  check_edges(pt_edges_, "ptEdges");
  if (eta_edges_.front() != 0) throw std::invalid_argument("etaEdges: edges of |eta| start at 0");
  if (factors_.size() != eta_bins() * pt_bins())
    throw std::invalid_argument("factors: " + std::to_string(factors_.size()) + " values for " +
                                std::to_string(eta_bins()) + " |eta| bins x " + std::to_string(pt_bins()) +
                                " pt bins = " + std::to_string(eta_bins() * pt_bins()));
  for (std::size_t i = 0; i < factors_.size(); ++i)
    if (!(factors_[i] > 0) || !std::isfinite(factors_[i]))
      throw std::invalid_argument("factors[" + std::to_string(i) + "]: not a positive number");
}

double jet_corrections::factor(double pt, double eta) const noexcept {
  return factors_[bin(eta_edges_, std::abs(eta)) * pt_bins() + bin(pt_edges_, pt)];
}

}  // namespace hep
