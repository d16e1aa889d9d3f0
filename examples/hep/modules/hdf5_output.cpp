// SPDX-License-Identifier: Apache-2.0
// hep::HDF5Output: the selected events (run, lumi, event, MET, counts), their jets and fat jets as
// tables, and the histograms, in an HDF5 file (layout: docs/hep.md, "The output file"). Rows are in
// event order whatever the threads did, so the single-threaded and threaded processors write the
// same content. The file is written as FILE.partial and renamed to FILE when the job ends well:
// a failed job leaves no truncated FILE behind, nor replaces an earlier one.
#include <cstdio>
#include <filesystem>
#include <optional>

#include <heddle/fw/registry.hpp>

#include "hdf5_file.hpp"
#include "selected_output.hpp"

namespace hep {

class HDF5Output final : public selected_output {
 public:
  explicit HDF5Output(const heddle::fw::parameter_set& ps)
      : selected_output(ps),
        path_(ps.get<std::string>("fileName")),
        where_(ps.where()),
        report_(ps.get<bool>("report", true)) {
    if (path_.empty()) throw heddle::fw::parameter_error(ps.where(), "fileName", "is empty");
  }

  ~HDF5Output() override { discard(); }  // a job that did not end leaves no partial file

  void open() override {
    try {
      file_.emplace(partial());
    } catch (const std::runtime_error& e) {
      throw heddle::fw::config_error(where_ + ": fileName '" + path_ + "': " + e.what());
    }
  }

 private:
  std::string partial() const { return path_ + ".partial"; }

  void write_rows(const block_rows& rows) override { file_->append(rows); }

  void discard() noexcept override {
    if (!file_) return;
    file_.reset();
    std::error_code ignored;
    std::filesystem::remove(partial(), ignored);
  }

  void finish(const std::vector<lumi_summary>& lumis, const std::vector<histogram>& total) override {
    file_->write_histograms(lumis, total);
    file_->attribute("format", std::string("heddle-hep-1"));
    const event_order::totals w = written();
    file_->attribute("events_processed", w.events_seen);
    file_->attribute("events_selected", w.events);
    file_->close();
    file_.reset();
    std::error_code ec;
    std::filesystem::rename(partial(), path_, ec);
    if (ec) throw std::runtime_error(where_ + ": cannot rename " + partial() + " to " + path_ + ": " + ec.message());
    if (report_)
      std::printf("hep: wrote %s: %llu of %llu events selected, %llu jets, %llu fat jets\n", path_.c_str(),
                  static_cast<unsigned long long>(w.events), static_cast<unsigned long long>(w.events_seen),
                  static_cast<unsigned long long>(w.jets), static_cast<unsigned long long>(w.fat_jets));
  }

  std::string path_, where_;
  bool report_;  // say at the end where the file went (parameter "report", default true)
  std::optional<h5_output_file> file_;
};

}  // namespace hep

HEDDLE_FW_MODULE(hep::HDF5Output);
