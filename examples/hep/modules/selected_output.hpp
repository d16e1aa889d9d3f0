// SPDX-License-Identifier: Apache-2.0
// What the job's output modules share (hep::HDF5Output, hep::JsonLinesOutput): they read the
// products of every event, keep the events a selection passed as table rows, and hand the rows to
// the file in event order, block by block (event_order), together with each luminosity block's
// histograms and, at the end, the job's. A global:: output module: write() only builds rows and
// moves them under a short lock; the file is written from the transitions, which never run
// concurrently, so the file's library needs no locking of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <heddle/fw/global.hpp>
#include <heddle/fw/parameter_set.hpp>

#include "../core/histogram.hpp"
#include "../core/output_rows.hpp"

namespace hep {

class selected_output : public heddle::fw::global::OutputModule<> {
 public:
  // A job starts afresh: the same process may run again.
  void begin_job() final;
  void write(const heddle::fw::event& e) const final;
  void begin_luminosity_block(const heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) final;
  void end_luminosity_block(heddle::fw::luminosity_block& lumi, const heddle::fw::event_setup&) final;
  void end_job() final;

 protected:
  explicit selected_output(const heddle::fw::parameter_set& ps);

  // The file's part, all from transitions: opened at the job's start; rows of complete blocks in
  // order; then, at the end, the blocks' summaries (in (run, lumi) order) and the job's
  // histograms (their sum).
  virtual void open() = 0;
  virtual void write_rows(const block_rows& rows) = 0;
  // The job stopped on an error (module_base::job_failed): the file would lack events. Leave no
  // file: remove what was written.
  virtual void discard() noexcept = 0;
  virtual void finish(const std::vector<lumi_summary>& lumis, const std::vector<histogram>& total) = 0;

  // The rows written so far (and the events of their blocks).
  event_order::totals written() const { return order_->handed_out(); }

 private:
  heddle::fw::get_token<mixing_summary> mixing_;
  heddle::fw::get_token<candidates> candidates_;
  heddle::fw::get_token<background> rho_;
  heddle::fw::get_token<missing_et> met_;
  heddle::fw::get_token<jets> jets_;
  heddle::fw::get_token<fat_jets> fat_jets_;
  heddle::fw::get_token<bool> dijet_, boosted_;
  heddle::fw::get_token<std::vector<histogram>> histograms_;

  std::unique_ptr<event_order> order_ = std::make_unique<event_order>();  // mutable through the pointer
  std::vector<lumi_summary> lumis_;
};

}  // namespace hep
