// SPDX-License-Identifier: Apache-2.0
// Generated events as FastJet's examples store them (Debian's fastjet-examples package: the
// Pythia-*.dat files). One particle a line, "px py pz E" in GeV and optionally a fifth column, the
// PDG id; "#END" ends an event and "#SUBSTART" starts a sub-event (one interaction of a pile-up
// event: the first is the hard scatter, the others minimum-bias interactions); any other line
// starting with '#' is a comment, blank lines are skipped. A file may end without "#END".
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "products.hpp"

namespace hep {

// Bad input: the message names the file, and the line where there is one ("FILE:LINE: what").
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One interaction: its particles, vertex 0.
using interaction = std::vector<particle>;

// An event of a file: its interactions in file order (one for a file without "#SUBSTART").
struct generated_event {
  std::vector<interaction> interactions;
  std::size_t line = 0;  // where it starts, for messages
};

// Reads every event of `path`. Throws input_error for a file that cannot be read, a line that is
// not 4 or 5 numbers (naming the line and what was found), a PDG id that is not an integer, a
// sub-event or event without particles, and a file without events. Cost: one pass, one allocation
// per interaction's growth.
std::vector<generated_event> read_event_file(const std::string& path);

// The mixing source's libraries: hard scatters, and minimum-bias interactions to draw pile-up from.
struct event_library {
  std::vector<interaction> hard_scatters;
  std::vector<interaction> minimum_bias;
  std::size_t particles() const noexcept;  // in both, for reports
};

// Hard scatters: the first interaction of every event of `hard_files`. Minimum bias: every
// interaction but the first of every event of `pileup_files` (each event must have sub-events and
// at least one besides its hard scatter). Throws input_error as read_event_file does, or naming a
// pile-up file whose event has no minimum-bias sub-event, or when either list of files is empty.
event_library load_event_library(const std::vector<std::string>& hard_files,
                                 const std::vector<std::string>& pileup_files);

}  // namespace hep
