// SPDX-License-Identifier: Apache-2.0
// The reconstruction job without the framework: the same steps (examples/hep/modules/
// reco_steps.hpp), histograms and HDF5 output, called in a plain serial loop, with the settings
// read from the same configuration. What heddle-bench reco measures the single-threaded
// processor's overhead against.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <heddle/fw/config.hpp>

namespace heddle::bench::reco {

class plain_loop {
 public:
  // Reads the libraries and conditions the configuration names (untimed, as a process's constructors).
  explicit plain_loop(const fw::process_config& config);
  ~plain_loop();
  // The job over events 0 .. events-1, `per_lumi` events per luminosity block, `per_run` per run,
  // writing `file`; returns the number of selected events.
  std::uint64_t run(std::uint64_t events, std::uint64_t per_lumi, std::uint64_t per_run, const std::string& file);

 private:
  struct state;
  std::unique_ptr<state> s_;
};

// The bytes of table `name` (/events, /jets, /fat_jets) of an HDF5 file the job wrote, as stored:
// two files with equal tables give equal bytes. Throws std::runtime_error naming file and table.
std::string table_bytes(const std::string& file, const char* name);

}  // namespace heddle::bench::reco
