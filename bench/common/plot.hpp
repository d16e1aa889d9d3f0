// SPDX-License-Identifier: Apache-2.0
// The plotting hook behind --plot DIR: a CSV per suite (DIR/<suite>.csv), then bench/common/plot.py
// (python3 + matplotlib) turns each CSV into DIR/<suite>.png.
#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace heddle::bench {

// Writes DIR/<suite>.csv for each suite in report["suites"] (columns: suite, variant, threads,
// config, median_s, min_s, max_s), and DIR/<suite>_<table>.csv for each array of flat objects in
// the suite's "tables" (columns: suite, then the keys of the first object). Returns the paths to
// plot: every table, and each suite's rows unless the suite says "plot_rows": false. Throws
// std::runtime_error if a file cannot be written.
std::vector<std::filesystem::path> write_csv(const nlohmann::json& report, const std::filesystem::path& dir);

// Runs plot.py on the CSVs, writing the PNGs into `dir`. The script is the one in the source tree
// this program was built from, or $HEDDLE_BENCH_PLOT_SCRIPT; the interpreter is the python3 with
// matplotlib that CMake found, or $HEDDLE_BENCH_PYTHON. Throws std::runtime_error if the
// interpreter cannot be started or the script fails (matplotlib missing, for instance).
void plot_csv(const std::vector<std::filesystem::path>& csvs, const std::filesystem::path& dir);

}  // namespace heddle::bench
