// SPDX-License-Identifier: Apache-2.0
// The detector response, charged-hadron subtraction and missing ET (examples/hep/core/detector.hpp).
#include <gtest/gtest.h>

#include <cmath>

#include "core/detector.hpp"

namespace {

hep::particle at(double pt, double eta, double phi, std::int32_t pdg, std::uint32_t vertex) {
  hep::particle p;
  p.p.px = pt * std::cos(phi);
  p.p.py = pt * std::sin(phi);
  p.p.pz = pt * std::sinh(eta);
  p.p.e = std::hypot(pt * std::cosh(eta), 0.1396);
  p.pdg_id = pdg;
  p.vertex = vertex;
  return p;
}

TEST(Detector, AcceptanceTrackerAndCharges) {
  const hep::particles in = {at(10, 0.5, 0.1, 211, 0),    // tracked, hard scatter
                             at(10, 3.0, 0.2, 211, 3),    // charged, outside the tracker
                             at(10, 1.0, 0.3, 22, 2),     // photon
                             at(10, 5.0, 0.4, 211, 0),    // outside the calorimeter
                             at(10, 0.0, 0.5, 12, 0),     // a neutrino
                             at(10, -2.0, 0.6, -211, 5),  // tracked, pile-up
                             at(10, 0.2, 0.7, 11, 0)};    // an electron: negative
  const hep::candidates c = hep::detector_response(in, {}, 42);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_TRUE(c[0].tracked);
  EXPECT_EQ(c[0].charge, 1);
  EXPECT_FALSE(c[1].tracked);
  EXPECT_EQ(c[1].charge, 1);
  EXPECT_EQ(c[2].charge, 0);
  EXPECT_FALSE(c[2].tracked);
  EXPECT_TRUE(c[3].tracked);
  EXPECT_EQ(c[3].charge, -1);
  EXPECT_EQ(c[3].vertex, 5u);
  EXPECT_EQ(c[4].charge, -1);
  // Track resolution is a fraction of a per cent at 10 GeV; the photon's ~1 %; a hadron outside
  // the tracker ~30 %. Direction kept: the same eta and phi.
  EXPECT_NEAR(c[0].p.pt(), 10, 0.5);
  EXPECT_NEAR(c[0].p.eta(), 0.5, 1e-9);
  EXPECT_NEAR(c[2].p.phi(), 0.3, 1e-9);

  const hep::candidates same = hep::detector_response(in, {}, 42), other = hep::detector_response(in, {}, 43);
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i].p.e, same[i].p.e);  // bit for bit
    EXPECT_NE(c[i].p.e, other[i].p.e);
  }
}

TEST(Detector, ChargesWithoutPdgIdsAreDeterministicAndMostlyCharged) {
  int charged = 0;
  for (int i = 0; i < 3000; ++i) {
    hep::particle p = at(1 + i * 0.01, 0.0, i * 0.002, 0, 0);
    const int q = hep::charge_of(p);
    EXPECT_EQ(q, hep::charge_of(p));
    EXPECT_TRUE(q >= -1 && q <= 1);
    charged += q != 0;
  }
  EXPECT_NEAR(charged / 3000.0, 2.0 / 3.0, 0.05);
}

TEST(Detector, SubtractionRemovesPileupTracksOnly) {
  hep::candidates all(4);
  all[0].tracked = true, all[0].vertex = 0;
  all[1].tracked = true, all[1].vertex = 2;
  all[2].tracked = false, all[2].vertex = 2;  // neutral or untracked pile-up stays: no vertex to tell
  all[3].tracked = false, all[3].vertex = 0;
  const hep::candidates chs = hep::charged_hadron_subtraction(all);
  ASSERT_EQ(chs.size(), 3u);
  EXPECT_EQ(chs[1].vertex, 2u);
  EXPECT_FALSE(chs[1].tracked);
}

TEST(Detector, MissingEtIsMinusTheVectorSum) {
  hep::candidates c(2);
  c[0].p = {3, 0, 1, 5};
  c[1].p = {0, 4, -1, 5};
  const hep::missing_et m = hep::missing_transverse_momentum(c);
  EXPECT_EQ(m.mex, -3);
  EXPECT_EQ(m.mey, -4);
  EXPECT_EQ(m.met(), 5);
  EXPECT_EQ(m.sum_et, 7);
}

TEST(Detector, BadSettingsAreRefused) {
  hep::detector_config c;
  c.tracker_eta_max = 6;
  EXPECT_THROW(hep::check(c), std::invalid_argument);
  c = {};
  c.hadron_constant = -1;
  EXPECT_THROW(hep::check(c), std::invalid_argument);
}

}  // namespace
