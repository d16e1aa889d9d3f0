// SPDX-License-Identifier: Apache-2.0
// The reconstruction job's products: what each module of examples/hep makes in the event, the
// luminosity block or the conditions, as plain value types. Every type says what it adds to the
// run's checksum (heddle_fw_digest, found by argument-dependent lookup), so that heddle-fw's
// checksum covers every product of every event, bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <heddle/fw/digest.hpp>

namespace hep {

// A four-momentum in GeV, with the quantities the modules cut on.
struct four_momentum {
  double px = 0, py = 0, pz = 0, e = 0;

  double pt() const noexcept { return std::hypot(px, py); }
  double phi() const noexcept { return std::atan2(py, px); }
  // Pseudorapidity; ±1e9 along the beam (pt = 0), where no cut of this job lets a particle through.
  double eta() const noexcept {
    const double t = pt();
    if (t == 0) return pz >= 0 ? 1e9 : -1e9;
    return std::asinh(pz / t);
  }
  double mass() const noexcept {
    const double m2 = e * e - px * px - py * py - pz * pz;
    return m2 > 0 ? std::sqrt(m2) : 0.0;
  }
};
std::uint64_t heddle_fw_digest(const four_momentum& p) noexcept;

// A generated particle of the mixed event. `vertex` is 0 for the hard scatter and k for the k-th
// pile-up interaction; `pdg_id` is the particle's PDG code where the event file gives one, else 0.
struct particle {
  four_momentum p;
  std::int32_t pdg_id = 0;
  std::uint32_t vertex = 0;
};
std::uint64_t heddle_fw_digest(const particle& p) noexcept;
using particles = std::vector<particle>;

// What was mixed into the event: the hard scatter's index in its library and the number of
// pile-up interactions drawn (small and trivially copyable: it lives in the event's slot).
struct mixing_summary {
  std::uint32_t hard_scatter = 0;
  std::uint32_t pileup = 0;
};
std::uint64_t heddle_fw_digest(const mixing_summary& m) noexcept;

// A particle-flow candidate: a particle as the detector measured it.
struct candidate {
  four_momentum p;
  std::uint32_t vertex = 0;  // the generated particle's vertex (charged candidates keep it)
  std::int8_t charge = 0;    // -1, 0, +1
  bool tracked = false;      // charged and inside the tracker: its vertex is known
};
std::uint64_t heddle_fw_digest(const candidate& c) noexcept;
using candidates = std::vector<candidate>;

// The event's median background density per unit area (GeV), and its spread.
struct background {
  double rho = 0;
  double sigma = 0;
};
std::uint64_t heddle_fw_digest(const background& b) noexcept;

// An anti-kt R = 0.4 jet after pile-up subtraction (rho × area) and energy corrections.
struct jet {
  four_momentum p;    // corrected
  double area = 0;    // active area
  double raw_pt = 0;  // before subtraction and corrections
  double jec = 1;     // the correction factor applied to the subtracted jet
};
std::uint64_t heddle_fw_digest(const jet& j) noexcept;
using jets = std::vector<jet>;

// An anti-kt R = 0.8 jet and its trimmed (groomed) mass.
struct fat_jet {
  four_momentum p;
  double groomed_mass = 0;
};
std::uint64_t heddle_fw_digest(const fat_jet& j) noexcept;
using fat_jets = std::vector<fat_jet>;

// Missing transverse momentum: minus the vector sum of every candidate's transverse momentum.
struct missing_et {
  double mex = 0, mey = 0;
  double sum_et = 0;  // the scalar sum
  double met() const noexcept { return std::hypot(mex, mey); }
  double phi() const noexcept { return std::atan2(mey, mex); }
};
std::uint64_t heddle_fw_digest(const missing_et& m) noexcept;

}  // namespace hep
