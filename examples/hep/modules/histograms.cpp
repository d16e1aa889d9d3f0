// SPDX-License-Identifier: Apache-2.0
// hep::JetHistograms: the job's histograms (jet pt, eta and mass, trimmed mass, rho, missing ET,
// multiplicities), filled by every event concurrently without a lock, and put as a
// luminosity-block product (a std::vector<hep::histogram>) at the end of each block. The output
// modules read it there and add the blocks up into the job's histograms.
//
// Each open luminosity block has its own atomic_histogram set (histogram.hpp): a fill is one
// relaxed atomic increment, so events of a block never wait for one another, and with concurrent
// lumis the events of two blocks fill two sets. A set is found by the event's (run, lumi) among
// `max_open_lumis` slots, whose keys are atomics written by the block's transitions (which
// happen before the block's first event and after its last: the framework orders them).
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "../core/reco_histograms.hpp"

namespace hep {

class JetHistograms final : public heddle::fw::global::EDAnalyzer<> {
 public:
  static constexpr std::size_t max_open_lumis = 16;

  explicit JetHistograms(const heddle::fw::parameter_set& ps)
      : jets_(consumes<jets>(ps.get<heddle::fw::input_tag>("jets"))),
        fat_jets_(consumes<fat_jets>(ps.get<heddle::fw::input_tag>("fatJets"))),
        rho_(consumes<background>(ps.get<heddle::fw::input_tag>("rho"))),
        met_(consumes<missing_et>(ps.get<heddle::fw::input_tag>("met"))),
        candidates_(consumes<candidates>(ps.get<heddle::fw::input_tag>("candidates"))),
        out_(produces<std::vector<histogram>>("", heddle::fw::transition::end_luminosity_block)),
        slots_(std::make_unique<slot[]>(max_open_lumis)) {}

  void begin_luminosity_block(const heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) override {
    for (std::size_t i = 0; i < max_open_lumis; ++i) {
      slot& s = slots_[i];
      if (s.key.load(std::memory_order_relaxed) != 0) continue;
      for (atomic_histogram& h : s.h) h.reset();
      s.key.store(key(lumi.run(), lumi.number()), std::memory_order_release);
      return;
    }
    throw std::runtime_error("hep::JetHistograms: more than " + std::to_string(max_open_lumis) +
                             " luminosity blocks open at once");
  }

  void analyze(const heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    fill_reco_histograms(find(key(e.id().run, e.id().lumi)).h, e.get(jets_), e.get(fat_jets_), e.get(rho_), e.get(met_),
                         e.get(candidates_).size());
  }

  void end_luminosity_block(heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) override {
    slot& s = find(key(lumi.run(), lumi.number()));
    std::vector<histogram>& out = lumi.emplace(out_);
    for (const atomic_histogram& h : s.h) out.push_back(h.snapshot());
    s.key.store(0, std::memory_order_release);
  }

 private:
  struct slot {
    std::atomic<std::uint64_t> key{0};  // (run << 32 | lumi) of the block using it, 0 when free
    std::vector<atomic_histogram> h = make_reco_histograms();
  };

  static std::uint64_t key(std::uint32_t run, std::uint32_t lumi) noexcept { return std::uint64_t{run} << 32 | lumi; }

  slot& find(std::uint64_t k) const {
    for (std::size_t i = 0; i < max_open_lumis; ++i)
      if (slots_[i].key.load(std::memory_order_acquire) == k) return slots_[i];
    throw std::logic_error("hep::JetHistograms: an event of luminosity block " + std::to_string(k >> 32) + ":" +
                           std::to_string(k & 0xffffffffu) + " that did not begin");
  }

  heddle::fw::get_token<jets> jets_;
  heddle::fw::get_token<fat_jets> fat_jets_;
  heddle::fw::get_token<background> rho_;
  heddle::fw::get_token<missing_et> met_;
  heddle::fw::get_token<candidates> candidates_;
  heddle::fw::put_token<std::vector<histogram>> out_;
  std::unique_ptr<slot[]> slots_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::JetHistograms);
