// SPDX-License-Identifier: Apache-2.0
// Writes the reconstruction job's files for the Python checks (tests/hep/CMakeLists.txt): the
// example's configuration at low pile-up, run by the single-threaded processor and by the threaded
// one (2 workers, 4 events in flight, 2 lumis open), each writing the HDF5 file and its JSON-lines
// twin (hep::JsonLinesOutput, added here beside the HDF5 output). Then check_output.py reads each
// HDF5 file back with h5py against its twin row by row, and compare_outputs.py finds the two HDF5
// files equal.
//   write_reco_files CONFIG OUT_DIR
// Exit 0 when both runs ended with equal checksums; 77 (skipped) without FastJet's example files.
#include <cstdio>
#include <filesystem>
#include <string>

#include <heddle/fw.hpp>

using namespace heddle::fw;

namespace {

run_report run_job(const std::string& config, const std::string& dir, const std::string& name, bool threaded) {
  const process_config c = load_config(config, {{"mixing.mu", "8", "test"},
                                                {"output.fileName", dir + "/" + name + ".h5", "test"}});
  process p = make_process(c);
  const std::optional<registered_module> text = find_registered_module("hep::JsonLinesOutput");
  if (!text) throw std::runtime_error("hep::JsonLinesOutput is not registered");
  const parameter_set ps =
      parameter_set::from_json(R"({"fileName": ")" + dir + "/" + name +
                                   R"(.jsonl", "mixing": "mixing", "candidates": "particleFlow", "rho": "rho",
          "met": "met", "jets": "ak4Jets", "fatJets": "ak8Jets", "dijet": "dijet", "boosted": "boosted",
          "histograms": "histograms"})",
                               "text twin");
  const std::string named = "text twin", label = "text";
  p.add_module({label, text->name}, [&] {
    return text->make(ps, module_context{module_role::output, c.options, named, c.file, named, label});
  });
  p.add_end_path("text", {"text"});
  p.finalize();
  run_options o;
  o.events = 30;
  o.events_per_lumi = 4;
  o.events_per_run = 16;
  if (threaded) {
    o.threads = 2;
    o.events_in_flight = 4;
    o.concurrent_lumis = 2;
    return run_threaded(p, o);
  }
  return run_single_threaded(p, o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_reco_files CONFIG OUT_DIR\n");
    return 2;
  }
  if (!std::filesystem::exists(std::string(HEP_FASTJET_EXAMPLES) + "/Pythia-PtMin1000-LHC-10ev.dat")) {
    std::printf("skipped: %s has no Pythia files (apt-get install fastjet-examples)\n", HEP_FASTJET_EXAMPLES);
    return 77;
  }
  std::filesystem::create_directories(argv[2]);
  try {
    const run_report single = run_job(argv[1], argv[2], "single", false);
    const run_report threaded = run_job(argv[1], argv[2], "threaded", true);
    std::printf("write_reco_files: checksums %#llx (single-threaded), %#llx (threaded)\n",
                static_cast<unsigned long long>(single.checksum), static_cast<unsigned long long>(threaded.checksum));
    return single.checksum == threaded.checksum ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write_reco_files: %s\n", e.what());
    return 1;
  }
}
