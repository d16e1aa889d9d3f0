// SPDX-License-Identifier: Apache-2.0
#include "products.hpp"

#include <bit>

#include "seeds.hpp"

namespace hep {

using heddle::fw::product_digest;

namespace {
// The per-element digests of the big products (tens of thousands of particles and candidates per
// event) fold each field in with a rotate, an xor and a multiply (FxHash's step: a bijection of the
// field for fixed others, so any one changed field changes the result); the framework's range
// digest then mixes each element fully. A splitmix per field cost 1.6 % of the job's time.
constexpr std::uint64_t fold(std::uint64_t h, std::uint64_t x) noexcept {
  return (std::rotl(h, 5) ^ x) * 0x517cc1b727220a95ull;
}
}  // namespace

std::uint64_t heddle_fw_digest(const four_momentum& p) noexcept {
  return fold(fold(fold(fold(0, product_digest(p.px)), product_digest(p.py)), product_digest(p.pz)),
              product_digest(p.e));
}
std::uint64_t heddle_fw_digest(const particle& p) noexcept {
  return fold(fold(heddle_fw_digest(p.p), static_cast<std::uint32_t>(p.pdg_id)), p.vertex);
}
std::uint64_t heddle_fw_digest(const mixing_summary& m) noexcept { return mix(m.hard_scatter, m.pileup); }
std::uint64_t heddle_fw_digest(const candidate& c) noexcept {
  return fold(fold(fold(heddle_fw_digest(c.p), c.vertex), static_cast<std::uint8_t>(c.charge)), c.tracked);
}
std::uint64_t heddle_fw_digest(const background& b) noexcept {
  return mix(product_digest(b.rho), product_digest(b.sigma));
}
std::uint64_t heddle_fw_digest(const jet& j) noexcept {
  return mix(mix(mix(heddle_fw_digest(j.p), product_digest(j.area)), product_digest(j.raw_pt)), product_digest(j.jec));
}
std::uint64_t heddle_fw_digest(const fat_jet& j) noexcept {
  return mix(heddle_fw_digest(j.p), product_digest(j.groomed_mass));
}
std::uint64_t heddle_fw_digest(const missing_et& m) noexcept {
  return mix(mix(product_digest(m.mex), product_digest(m.mey)), product_digest(m.sum_et));
}

}  // namespace hep
