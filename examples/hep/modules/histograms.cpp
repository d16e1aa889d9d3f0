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
#include <array>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include "../core/histogram.hpp"
#include "../core/products.hpp"

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
    throw std::runtime_error("hep::JetHistograms: more than " + std::to_string(max_open_lumis) + " luminosity blocks open at once");
  }

  void analyze(const heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    std::vector<atomic_histogram>& h = find(key(e.id().run, e.id().lumi)).h;
    const hep::jets& js = e.get(jets_);
    for (const jet& j : js) {
      h[jet_pt].fill(j.p.pt());
      h[jet_eta].fill(j.p.eta());
      h[jet_mass].fill(j.p.mass());
    }
    for (const fat_jet& j : e.get(fat_jets_)) h[fat_jet_groomed_mass].fill(j.groomed_mass);
    h[rho].fill(e.get(rho_).rho);
    h[met].fill(e.get(met_).met());
    h[n_jets].fill(static_cast<double>(js.size()));
    h[n_candidates].fill(static_cast<double>(e.get(candidates_).size()));
  }

  void end_luminosity_block(heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) override {
    slot& s = find(key(lumi.run(), lumi.number()));
    std::vector<histogram>& out = lumi.emplace(out_);
    for (const atomic_histogram& h : s.h) out.push_back(h.snapshot());
    s.key.store(0, std::memory_order_release);
  }

 private:
  enum index { jet_pt, jet_eta, jet_mass, fat_jet_groomed_mass, rho, met, n_jets, n_candidates };

  struct slot {
    std::atomic<std::uint64_t> key{0};  // (run << 32 | lumi) of the block using it, 0 when free
    std::vector<atomic_histogram> h = make_set();
  };

  static std::vector<atomic_histogram> make_set() {
    std::vector<atomic_histogram> h;
    h.reserve(8);  // in the order of `index`
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
