// SPDX-License-Identifier: Apache-2.0
#include "selected_output.hpp"

#include <algorithm>

namespace hep {

using heddle::fw::input_tag;

selected_output::selected_output(const heddle::fw::parameter_set& ps)
    : mixing_(consumes<mixing_summary>(ps.get<input_tag>("mixing"))),
      candidates_(consumes<candidates>(ps.get<input_tag>("candidates"))),
      rho_(consumes<background>(ps.get<input_tag>("rho"))),
      met_(consumes<missing_et>(ps.get<input_tag>("met"))),
      jets_(consumes<jets>(ps.get<input_tag>("jets"))),
      fat_jets_(consumes<fat_jets>(ps.get<input_tag>("fatJets"))),
      dijet_(consumes<bool>(ps.get<input_tag>("dijet"))),
      boosted_(consumes<bool>(ps.get<input_tag>("boosted"))),
      histograms_(consumes<std::vector<histogram>>(ps.get<input_tag>("histograms"), heddle::fw::in_lumi)) {}

void selected_output::begin_job() {
  order_ = std::make_unique<event_order>();
  lumis_.clear();
  open();
}

void selected_output::write(const heddle::fw::event& e) const {
  const heddle::fw::event_id& id = e.id();
  const bool dijet = e.get(dijet_), boosted = e.get(boosted_);
  if (!dijet && !boosted) {
    order_->skip(id.run, id.lumi);
    return;
  }
  order_->add(make_selected_event(id.run, id.lumi, id.event, e.get(mixing_), e.get(candidates_).size(), e.get(rho_),
                                  e.get(met_), e.get(jets_), e.get(fat_jets_), dijet, boosted));
}

void selected_output::begin_luminosity_block(const heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) {
  order_->begin_block(lumi.run(), lumi.number());
}

void selected_output::end_luminosity_block(heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) {
  lumis_.push_back({lumi.run(), lumi.number(), 0, lumi.get(histograms_)});
  for (const block_rows& rows : order_->end_block(lumi.run(), lumi.number())) {
    for (lumi_summary& s : lumis_)
      if (s.run == rows.run && s.lumi == rows.lumi) s.events = rows.events_seen;
    write_rows(rows);
  }
}

void selected_output::end_job() {
  if (job_failed()) {
    discard();
    return;
  }
  std::sort(lumis_.begin(), lumis_.end(), [](const lumi_summary& a, const lumi_summary& b) {
    return a.run != b.run ? a.run < b.run : a.lumi < b.lumi;
  });
  finish(lumis_, sum_histograms(lumis_));
}

}  // namespace hep
