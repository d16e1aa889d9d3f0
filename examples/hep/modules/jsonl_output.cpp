// SPDX-License-Identifier: Apache-2.0
// hep::JsonLinesOutput: the rows hep::HDF5Output writes, as text: one JSON object per selected
// event, in event order, with its jets and fat jets inside (the histograms are the HDF5 file's
// alone). Doubles are printed so that they read back to the same bits. For reading by eye,
// for diffing two runs, and for checking the HDF5 file row by row (tests/hep). Written as
// FILE.partial and renamed at the end, as the HDF5 file.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <heddle/fw/registry.hpp>

#include "selected_output.hpp"

namespace hep {

namespace {

nlohmann::json to_json(const selected_event& s) {
  const event_row& r = s.row;
  // Formatted by hand: a table, one row a line.
  // clang-format off
  nlohmann::json j = {{"run", r.run},       {"lumi", r.lumi},         {"event", r.event},          {"n_pileup", r.n_pileup},
                      {"n_candidates", r.n_candidates}, {"n_jets", r.n_jets}, {"n_fat_jets", r.n_fat_jets}, {"rho", r.rho},
                      {"met", r.met},       {"met_phi", r.met_phi},   {"sum_et", r.sum_et},        {"dijet", r.dijet},
                      {"boosted", r.boosted}};
  nlohmann::json& jets = j["jets"] = nlohmann::json::array();
  for (const jet_row& x : s.jets)
    jets.push_back({{"px", x.px}, {"py", x.py}, {"pz", x.pz}, {"e", x.e}, {"pt", x.pt}, {"eta", x.eta}, {"phi", x.phi},
                    {"area", x.area}, {"raw_pt", x.raw_pt}, {"jec", x.jec}});
  nlohmann::json& fat = j["fat_jets"] = nlohmann::json::array();
  for (const fat_jet_row& x : s.fat_jets)
    fat.push_back({{"px", x.px}, {"py", x.py}, {"pz", x.pz}, {"e", x.e}, {"pt", x.pt}, {"eta", x.eta}, {"phi", x.phi},
                   {"mass", x.mass}, {"groomed_mass", x.groomed_mass}});
  // clang-format on
  return j;
}

}  // namespace

class JsonLinesOutput final : public selected_output {
 public:
  explicit JsonLinesOutput(const heddle::fw::parameter_set& ps)
      : selected_output(ps),
        path_(ps.get<std::string>("fileName")),
        where_(ps.where()),
        report_(ps.get<bool>("report", true)) {
    if (path_.empty()) throw heddle::fw::parameter_error(ps.where(), "fileName", "is empty");
  }

  ~JsonLinesOutput() override { discard(); }  // a job that did not end leaves no partial file

  void open() override {
    out_.open(partial(), std::ios::trunc);
    if (!out_) throw heddle::fw::config_error(where_ + ": fileName '" + path_ + "': cannot create " + partial());
  }

 private:
  std::string partial() const { return path_ + ".partial"; }

  void discard() noexcept override {
    if (!out_.is_open()) return;
    out_.close();
    std::error_code ignored;
    std::filesystem::remove(partial(), ignored);
  }

  void write_rows(const block_rows& rows) override {
    for (const selected_event& e : rows.events) out_ << to_json(e).dump() << '\n';
    if (!out_) throw std::runtime_error(where_ + ": cannot write " + partial() + " (disk full?)");
  }

  void finish(const std::vector<lumi_summary>&, const std::vector<histogram>&) override {
    out_.close();
    if (out_.fail()) throw std::runtime_error(where_ + ": cannot write " + partial() + " (disk full?)");
    std::error_code ec;
    std::filesystem::rename(partial(), path_, ec);
    if (ec) throw std::runtime_error(where_ + ": cannot rename " + partial() + " to " + path_ + ": " + ec.message());
    if (report_)
      std::printf("hep: wrote %s: %llu events\n", path_.c_str(), static_cast<unsigned long long>(written().events));
  }

  std::string path_, where_;
  bool report_;  // say at the end where the file went (parameter "report", default true)
  std::ofstream out_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::JsonLinesOutput);
