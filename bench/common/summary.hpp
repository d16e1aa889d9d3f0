// SPDX-License-Identifier: Apache-2.0
// `heddle-bench summary DIR`: the summary table of docs/benchmarks.md, made from the recorded results
// in DIR (heddle-bench --record DIR writes them: one JSON report per suite and machine). One row per
// figure that has a target, in the order of the files' names and then of the figures' names:
//   | suite | figure | value (95 % interval) | target | verdict | machine | date | commit |
// (the suite named by the file's name, <suite>.<machine>.json)
// A test (tests/tools/bench_summary_docs.sh) fails when the page's summary differs from it.
#pragma once

#include <filesystem>
#include <string>

namespace heddle::bench {

// The table as markdown. std::runtime_error naming the file when DIR has no report, or a report
// cannot be read or lacks what a recorded result holds (provenance, ratios).
std::string summary_table(const std::filesystem::path& dir);

}  // namespace heddle::bench
