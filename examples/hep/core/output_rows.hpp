// SPDX-License-Identifier: Apache-2.0
// What the job's output modules write for a selected event, as table rows, and the order they
// write them in. Output modules get events in whatever order the threads finish them; the files
// must list them in event order, the same single-threaded and threaded. event_order collects each
// luminosity block's rows as events finish and hands blocks out, sorted by event number, once
// they and every block begun before them have ended.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "histogram.hpp"
#include "products.hpp"

namespace hep {

struct event_row {
  std::uint32_t run = 0, lumi = 0;
  std::uint64_t event = 0;
  std::uint32_t n_pileup = 0, n_candidates = 0, n_jets = 0, n_fat_jets = 0;
  double rho = 0, met = 0, met_phi = 0, sum_et = 0;
  std::uint8_t dijet = 0, boosted = 0;
  std::uint64_t first_jet = 0, first_fat_jet = 0;  // rows in the jet tables, set when written
};

struct jet_row {
  std::uint64_t event = 0;
  double px = 0, py = 0, pz = 0, e = 0, pt = 0, eta = 0, phi = 0, area = 0, raw_pt = 0, jec = 0;
};

struct fat_jet_row {
  std::uint64_t event = 0;
  double px = 0, py = 0, pz = 0, e = 0, pt = 0, eta = 0, phi = 0, mass = 0, groomed_mass = 0;
};

struct selected_event {
  event_row row;
  std::vector<jet_row> jets;
  std::vector<fat_jet_row> fat_jets;
};

// One row set from the event's products.
selected_event make_selected_event(std::uint32_t run, std::uint32_t lumi, std::uint64_t event,
                                   const mixing_summary& mixing, std::size_t n_candidates, const background& bkg,
                                   const missing_et& met, const jets& ak4, const fat_jets& ak8, bool dijet,
                                   bool boosted);

// A block's rows, ready to write.
struct block_rows {
  std::uint32_t run = 0, lumi = 0;
  std::uint64_t events_seen = 0;       // events of the block add() was called for
  std::vector<selected_event> events;  // by event number
};

// A luminosity block as the output files summarise it: its events and its histograms.
struct lumi_summary {
  std::uint32_t run = 0, lumi = 0;
  std::uint64_t events = 0;
  std::vector<histogram> histograms;
};

class event_order {
 public:
  // The framework's begin_luminosity_block, in the order blocks begin (transitions never run
  // concurrently with one another).
  void begin_block(std::uint32_t run, std::uint32_t lumi);
  // From the output module's event calls, concurrently: the rows of a selected event of an open
  // block (std::logic_error otherwise). A lock held for a move into a vector.
  void add(selected_event e);
  // Counts an event of an open block that was not selected (for the block's event count); as add.
  void skip(std::uint32_t run, std::uint32_t lumi);
  // end_luminosity_block: the blocks now complete in begin order (this one and those after it that
  // ended before), their events sorted by number, with first_jet / first_fat_jet numbered on from
  // the rows handed out before. std::logic_error for a block not open.
  std::vector<block_rows> end_block(std::uint32_t run, std::uint32_t lumi);
  // Blocks begun and not yet handed out (0 after a complete job).
  std::size_t open_blocks() const;

  // What end_block has handed out so far: events of those blocks (selected or not), selected
  // events, their jet and fat-jet rows.
  struct totals {
    std::uint64_t events_seen = 0, events = 0, jets = 0, fat_jets = 0;
  };
  totals handed_out() const;

 private:
  struct open_block {
    block_rows rows;
    bool ended = false;
  };
  open_block& find(std::uint32_t run, std::uint32_t lumi);  // under the lock

  mutable std::mutex lock_;
  std::deque<open_block> open_;
  totals out_;
};

// The job's histograms: the blocks' added up (empty without blocks). std::invalid_argument if two
// blocks' sets differ in bins.
std::vector<histogram> sum_histograms(const std::vector<lumi_summary>& lumis);

}  // namespace hep
