// SPDX-License-Identifier: Apache-2.0
#include "plain_loop.hpp"

#include <hdf5.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include <heddle/fw/conditions.hpp>
#include <heddle/fw/parameter_set.hpp>

#include "core/detector.hpp"
#include "core/reco_histograms.hpp"
#include "core/seeds.hpp"
#include "modules/hdf5_file.hpp"
#include "modules/reco_steps.hpp"

namespace heddle::bench::reco {

using namespace hep;

namespace {

const fw::parameter_set& parameters_of(const fw::process_config& c, const std::string& label) {
  for (const fw::module_config& m : c.modules)
    if (m.label == label) return m.parameters;
  throw std::runtime_error("reco: the configuration has no module '" + label + "'");
}

}  // namespace

struct plain_loop::state {
  event_library library;
  mixing_settings mixing;
  detector_config detector;
  std::uint64_t detector_seed = 1;
  rho_settings rho;
  jet_settings ak4;
  fat_jet_settings ak8;
  double dijet_pt = 0, dijet_eta = 0, boosted_pt = 0, mass_min = 0, mass_max = 0;
  std::vector<std::pair<fw::iov_start, jet_corrections>> corrections;  // by interval

  const jet_corrections& corrections_for(std::uint32_t run) const {
    const jet_corrections* c = &corrections.front().second;
    for (const auto& [start, table] : corrections)
      if (start.run <= run) c = &table;
    return *c;
  }
};

plain_loop::plain_loop(const fw::process_config& c) : s_(std::make_unique<state>()) {
  const fw::parameter_set& mix = parameters_of(c, "mixing");
  s_->library = load_event_library(mix.get<std::vector<std::string>>("hardScatterFiles"),
                                   mix.get<std::vector<std::string>>("pileupFiles"));
  s_->mixing.mu = mix.get<double>("mu");
  s_->mixing.seed = mix.get<std::uint64_t>("seed", 1);
  s_->detector_seed = parameters_of(c, "particleFlow").get<std::uint64_t>("seed", 1);
  s_->rho.ghosts.seed = parameters_of(c, "rho").get<std::uint64_t>("seed", 1);
  const fw::parameter_set& ak4 = parameters_of(c, "ak4Jets");
  s_->ak4.ghosts.seed = ak4.get<std::uint64_t>("seed", 1);
  s_->ak4.pt_min = ak4.get<double>("ptMin", s_->ak4.pt_min);
  s_->ak8.pt_min = parameters_of(c, "ak8Jets").get<double>("ptMin", s_->ak8.pt_min);
  const fw::parameter_set& dijet = parameters_of(c, "dijet");
  s_->dijet_pt = dijet.get<double>("ptMin", 100.0);
  s_->dijet_eta = dijet.get<double>("etaMax", 2.5);
  const fw::parameter_set& boosted = parameters_of(c, "boosted");
  s_->boosted_pt = boosted.get<double>("ptMin", 300.0);
  s_->mass_min = boosted.get<double>("massMin", 60.0);
  s_->mass_max = boosted.get<double>("massMax", 110.0);
  const fw::conditions conditions = fw::conditions::from_json_file(c.conditions_file);
  for (const auto& iov : conditions.intervals("hep::JetCorrectionsRecord"))
    s_->corrections.emplace_back(iov.start, jet_corrections(iov.payload.get<std::vector<double>>("etaEdges"),
                                                            iov.payload.get<std::vector<double>>("ptEdges"),
                                                            iov.payload.get<std::vector<double>>("factors")));
  if (s_->corrections.empty()) throw std::runtime_error("reco: no jet corrections in " + c.conditions_file);
}

plain_loop::~plain_loop() = default;

std::uint64_t plain_loop::run(std::uint64_t events, std::uint64_t per_lumi, std::uint64_t per_run,
                              const std::string& file) {
  const state& s = *s_;
  h5_output_file out(file);
  std::vector<atomic_histogram> histograms = make_reco_histograms();
  std::vector<lumi_summary> lumis;
  event_order order;  // the output modules' ordering and row numbering, one block at a time here
  event_key open{0, 0, 0};
  auto end_block = [&] {
    for (const block_rows& rows : order.end_block(open.run, open.lumi)) {
      out.append(rows);
      lumis.push_back({rows.run, rows.lumi, rows.events_seen, {}});
    }
    for (atomic_histogram& a : histograms) {
      lumis.back().histograms.push_back(a.snapshot());
      a.reset();
    }
  };
  for (std::uint64_t n = 0; n < events; ++n) {
    const event_key k{static_cast<std::uint32_t>(n / per_run + 1),
                      static_cast<std::uint32_t>((n % per_run) / per_lumi + 1), n};
    if (open.run != k.run || open.lumi != k.lumi) {
      if (open.run != 0) end_block();
      order.begin_block(k.run, k.lumi);
      open = k;
    }
    mixing_summary summary;
    const particles generated = mix_event(s.library, s.mixing, k, summary);
    const candidates pf = detector_response(generated, s.detector,
                                            event_seed(s.detector_seed, salt("hep::DetectorResponse"), k.run, k.lumi,
                                                       k.event));
    const candidates chs = charged_hadron_subtraction(pf);
    const background rho = estimate_rho(chs, s.rho, k);
    const jets ak4 = cluster_jets(chs, rho.rho, s.corrections_for(k.run), s.ak4, k);
    const fat_jets ak8 = cluster_fat_jets(pf, s.ak8);
    const missing_et met = missing_transverse_momentum(pf);
    const bool dijet = dijet_selected(ak4, s.dijet_pt, s.dijet_eta);
    const bool boosted = boosted_selected(ak8, s.boosted_pt, s.mass_min, s.mass_max);
    fill_reco_histograms(histograms, ak4, ak8, rho, met, pf.size());
    if (dijet || boosted)
      order.add(make_selected_event(k.run, k.lumi, k.event, summary, pf.size(), rho, met, ak4, ak8, dijet, boosted));
    else order.skip(k.run, k.lumi);
  }
  if (open.run != 0) end_block();
  const event_order::totals written = order.handed_out();
  const std::vector<histogram> total = sum_histograms(lumis);
  out.write_histograms(lumis, total);
  out.attribute("format", std::string("heddle-hep-1"));
  out.attribute("events_processed", written.events_seen);
  out.attribute("events_selected", written.events);
  out.close();
  return written.events;
}

std::string table_bytes(const std::string& file, const char* name) {
  auto fail = [&](const char* what) { throw std::runtime_error(file + ": /" + name + ": " + what); };
  h5_id f(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f) fail("cannot open the file");
  h5_id d(H5Dopen2(f.get(), name, H5P_DEFAULT), H5Dclose);
  if (!d) fail("no such table");
  h5_id type(H5Dget_type(d.get()), H5Tclose);
  h5_id space(H5Dget_space(d.get()), H5Sclose);
  const hssize_t rows = H5Sget_simple_extent_npoints(space.get());
  std::string bytes(std::size_t(rows) * H5Tget_size(type.get()), '\0');
  if (rows > 0 && H5Dread(d.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0) fail("cannot read");
  return bytes;
}

}  // namespace heddle::bench::reco
