// SPDX-License-Identifier: Apache-2.0
#include "output_rows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hep {

selected_event make_selected_event(std::uint32_t run, std::uint32_t lumi, std::uint64_t event,
                                   const mixing_summary& mixing, std::size_t n_candidates, const background& bkg,
                                   const missing_et& met, const jets& ak4, const fat_jets& ak8, bool dijet,
                                   bool boosted) {
  selected_event s;
  event_row& r = s.row;
  r.run = run;
  r.lumi = lumi;
  r.event = event;
  r.n_pileup = mixing.pileup;
  r.n_candidates = static_cast<std::uint32_t>(n_candidates);
  r.n_jets = static_cast<std::uint32_t>(ak4.size());
  r.n_fat_jets = static_cast<std::uint32_t>(ak8.size());
  r.rho = bkg.rho;
  r.met = met.met();
  r.met_phi = met.phi();
  r.sum_et = met.sum_et;
  r.dijet = dijet;
  r.boosted = boosted;
  s.jets.reserve(ak4.size());
  for (const jet& j : ak4)
    s.jets.push_back({event, j.p.px, j.p.py, j.p.pz, j.p.e, j.p.pt(), j.p.eta(), j.p.phi(), j.area, j.raw_pt, j.jec});
  s.fat_jets.reserve(ak8.size());
  for (const fat_jet& j : ak8)
    s.fat_jets.push_back({event, j.p.px, j.p.py, j.p.pz, j.p.e, j.p.pt(), j.p.eta(), j.p.phi(), j.p.mass(),
                          j.groomed_mass});
  return s;
}

namespace {
[[noreturn]] void not_open(std::uint32_t run, std::uint32_t lumi) {
  throw std::logic_error("hep::event_order: luminosity block " + std::to_string(run) + ":" + std::to_string(lumi) +
                         " is not open (begin_block first)");
}
}  // namespace

void event_order::begin_block(std::uint32_t run, std::uint32_t lumi) {
  std::lock_guard guard(lock_);
  for (const open_block& b : open_)
    if (b.rows.run == run && b.rows.lumi == lumi)
      throw std::logic_error("hep::event_order: luminosity block " + std::to_string(run) + ":" + std::to_string(lumi) +
                             " begun twice");
  open_.push_back({{run, lumi, 0, {}}, false});
}

event_order::open_block& event_order::find(std::uint32_t run, std::uint32_t lumi) {
  // Few blocks are open at once (the concurrent lumis): a scan from the newest.
  for (auto b = open_.rbegin(); b != open_.rend(); ++b)
    if (b->rows.run == run && b->rows.lumi == lumi && !b->ended) return *b;
  not_open(run, lumi);
}

void event_order::add(selected_event e) {
  std::lock_guard guard(lock_);
  open_block& b = find(e.row.run, e.row.lumi);
  ++b.rows.events_seen;
  b.rows.events.push_back(std::move(e));
}

void event_order::skip(std::uint32_t run, std::uint32_t lumi) {
  std::lock_guard guard(lock_);
  ++find(run, lumi).rows.events_seen;
}

std::vector<block_rows> event_order::end_block(std::uint32_t run, std::uint32_t lumi) {
  std::lock_guard guard(lock_);
  find(run, lumi).ended = true;
  std::vector<block_rows> ready;
  while (!open_.empty() && open_.front().ended) {
    block_rows rows = std::move(open_.front().rows);
    open_.pop_front();
    std::sort(rows.events.begin(), rows.events.end(),
              [](const selected_event& a, const selected_event& b) { return a.row.event < b.row.event; });
    for (selected_event& e : rows.events) {
      e.row.first_jet = out_.jets;
      e.row.first_fat_jet = out_.fat_jets;
      out_.jets += e.jets.size();
      out_.fat_jets += e.fat_jets.size();
    }
    out_.events_seen += rows.events_seen;
    out_.events += rows.events.size();
    ready.push_back(std::move(rows));
  }
  return ready;
}

std::size_t event_order::open_blocks() const {
  std::lock_guard guard(lock_);
  return open_.size();
}

event_order::totals event_order::handed_out() const {
  std::lock_guard guard(lock_);
  return out_;
}

std::vector<histogram> sum_histograms(const std::vector<lumi_summary>& lumis) {
  std::vector<histogram> total;
  for (const lumi_summary& l : lumis) {
    if (total.empty()) {
      total = l.histograms;
      continue;
    }
    if (l.histograms.size() != total.size())
      throw std::invalid_argument("hep::sum_histograms: luminosity blocks with different sets of histograms");
    for (std::size_t i = 0; i < total.size(); ++i) total[i].add(l.histograms[i]);
  }
  return total;
}

}  // namespace hep
