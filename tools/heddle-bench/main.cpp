// SPDX-License-Identifier: Apache-2.0
// heddle-bench: heddle against its peers, suite by suite, interleaved in one process.
//   heddle-bench <suite>|all [--check|--quick|--full] [--threads LIST] [--reps N] [--json FILE]
//                [--record DIR] [--plot DIR]
//   heddle-bench summary DIR     the summary table of the results recorded in DIR (bench/recorded)
// Exit status: 0 done; 1 a wrong result or a failure while running; 2 bad usage (an unknown suite,
// an option CLI11 rejects, an output file that cannot be written).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "harness.hpp"
#include "numeric_options.hpp"
#include "plot.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "summary.hpp"
#include "trace_option.hpp"

int main(int argc, char** argv) {
  using namespace heddle::bench;
  const auto suites = all_suites();
  std::string known, list;
  for (auto& s : suites) {
    known += (known.empty() ? "" : ", ") + s.name;
    list += "\n  " + s.name + std::string(s.name.size() < 10 ? 10 - s.name.size() : 1, ' ') + s.summary;
  }

  CLI::App app{"heddle-bench: heddle and its peers side by side; medians and min–max of interleaved runs"};
  app.footer("Suites:" + list + "\n  all       every suite in turn\n");
  std::string which, json_file, plot_dir, record_dir, summary_dir;
  options opt;
  app.add_option("suite", which, "a suite (" + known + "), all, or summary");
  app.add_option("dir", summary_dir, "with summary: the folder of recorded results to summarise");
  auto* quick = app.add_flag("--quick", opt.quick,
                             "small inputs: every suite in under a minute (the suite says which)");
  auto* full = app.add_flag("--full", opt.full, "paper-sized inputs")->excludes(quick);
  app.add_flag("--check", opt.check, "tiny inputs, each variant run once: verifies every result, times mean nothing")
      ->excludes(quick)
      ->excludes(full);
  app.add_option("--threads", opt.threads, "thread counts: --threads 1,2,4 or --threads 1 2 4 (default 1,2)")
      ->delimiter(',')
      ->check(heddle::tool::whole_number(1, 1024));
  app.add_option("--reps", opt.reps, "interleaved repetitions per variant, after a warm-up (default 5, at least 5)")
      ->check(heddle::tool::whole_number(5, 100000));
  app.add_option("--json", json_file, "write machine, suites (every sample) and ratios as JSON to FILE");
  app.add_option("--record", record_dir,
                 "also write each suite's report to DIR/<suite>.<machine>.json, replacing the machine's last one "
                 "(the recorded results that `heddle-bench summary DIR` and docs/benchmarks.md read)");
  app.add_option("--plot", plot_dir, "write DIR/<suite>.csv and DIR/<suite>.png (python3 + matplotlib)");
  std::string trace_file;
  app.add_option("--trace", trace_file,
                 "record a trace of the runs into FILE (Chrome trace-event JSON; heddle-trace reads it)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints --help, or the error and a hint
    return rc == 0 ? 0 : 2;      // CLI11's own codes (105, 108...) say nothing to a script
  }
  if (opt.check) opt.reps = 1;

  if (which == "summary") {
    if (summary_dir.empty()) {
      std::fprintf(stderr, "heddle-bench: summary: which folder? (heddle-bench summary bench/recorded)\n");
      return 2;
    }
    try {
      std::fputs(summary_table(summary_dir).c_str(), stdout);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heddle-bench: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  if (!summary_dir.empty()) {
    std::fprintf(stderr, "heddle-bench: '%s': only summary takes a folder (--json FILE, --record DIR)\n",
                 summary_dir.c_str());
    return 2;
  }
  std::string command = "heddle-bench";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];

  std::vector<const suite*> chosen;
  for (auto& s : suites)
    if (which == "all" || which == s.name) chosen.push_back(&s);
  if (chosen.empty()) {
    if (which.empty()) std::fprintf(stderr, "heddle-bench: which suite? known: %s, all\n", known.c_str());
    else std::fprintf(stderr, "heddle-bench: unknown suite '%s'; known: %s, all\n", which.c_str(), known.c_str());
    return 2;
  }
  // Fail on an unwritable output before spending minutes measuring.
  std::ofstream json_out;
  if (!json_file.empty()) {
    const auto parent = std::filesystem::path(json_file).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    json_out.open(json_file);
    if (!json_out) {
      std::fprintf(stderr, "heddle-bench: cannot write %s\n", json_file.c_str());
      return 2;
    }
  }

  if (!record_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(record_dir, ec);
    if (ec || !std::filesystem::is_directory(record_dir)) {
      std::fprintf(stderr, "heddle-bench: cannot write %s (--record)\n", record_dir.c_str());
      return 2;
    }
  }
  if (!record_dir.empty() && opt.check) {
    std::fprintf(stderr,
                 "heddle-bench: --record with --check: a check's times mean nothing, there is nothing to record\n");
    return 2;
  }

  auto report = new_report();
  report["provenance"]["command"] = command;
  report["provenance"]["scale"] = *opt.scale_name() ? opt.scale_name() : "standard";
  std::unique_ptr<heddle::tool::trace_option> trace;
  try {
    trace = std::make_unique<heddle::tool::trace_option>("heddle-bench", trace_file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench: --trace: %s\n", e.what());
    return 2;
  }
  try {
    for (auto* s : chosen) {
      // Each suite fills a report of its own, merged into the whole one: --record writes it alone.
      auto part = new_report();
      part["provenance"] = report["provenance"];
      s->run(opt, part);
      std::fflush(stdout);
      for (auto& [k, v] : part["suites"].items()) report["suites"][k] = v;
      for (auto& [k, v] : part["ratios"].items()) report["ratios"][k] = v;
      if (!record_dir.empty()) {
        const auto file = std::filesystem::path(record_dir) /
                          (s->name + "." + part["provenance"]["machine"].get<std::string>() + ".json");
        std::ofstream out(file);
        if (!(out << part.dump(2) << "\n") || !out.flush())
          throw std::runtime_error("cannot write " + file.string() + " (--record)");
        std::printf("recorded: %s\n", file.c_str());
      }
    }
    if (!trace->finish()) return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench: %s\n", e.what());
    if (json_out.is_open()) {  // no half-finished report where a good one is expected
      json_out.close();
      std::error_code ec;
      std::filesystem::remove(json_file, ec);
    }
    return 1;
  }
  if (json_out.is_open()) {
    json_out << report.dump(2) << "\n";
    if (!json_out.flush()) {
      std::fprintf(stderr, "heddle-bench: cannot write %s\n", json_file.c_str());
      return 1;
    }
    std::printf("json: %s\n", json_file.c_str());
  }
  if (!plot_dir.empty()) {
    try {
      plot_csv(write_csv(report, plot_dir), plot_dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heddle-bench: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
