// heddle-bench: heddle against its peers, suite by suite, in one process.
//   heddle-bench <suite>|all [--quick|--full] [--threads LIST] [--reps N] [--json FILE] [--plot DIR]
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness.hpp"
#include "suite.hpp"

int main(int argc, char** argv) {
  using namespace heddle::bench;
  CLI::App app{"heddle-bench: heddle and its peers side by side, medians of interleaved runs"};
  std::string which, json_file, plot_dir;
  options opt;
  std::string known;
  for (auto& s : all_suites()) known += (known.empty() ? "" : ", ") + s.name;
  app.add_option("suite", which, "a suite (" + known + ") or all")->required();
  auto* quick = app.add_flag("--quick", opt.quick, "small inputs: every suite in under a minute");
  app.add_flag("--full", opt.full, "paper-sized inputs")->excludes(quick);
  app.add_option("--threads", opt.threads, "thread counts, e.g. --threads 1 2 4")->check(CLI::Range(1u, 4096u));
  app.add_option("--reps", opt.reps, "interleaved repetitions per variant (at least 5)")->check(CLI::Range(5, 1000));
  app.add_option("--json", json_file, "write the results and ratios as JSON");
  app.add_option("--plot", plot_dir, "write CSV tables for plotting into this folder");
  CLI11_PARSE(app, argc, argv);

  nlohmann::json report{{"machine", machine_json()}, {"suites", nlohmann::json::object()},
                        {"ratios", nlohmann::json::object()}};
  bool matched = false;
  try {
    for (auto& s : all_suites())
      if (which == "all" || which == s.name) {
        matched = true;
        s.run(opt, report);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench: %s\n", e.what());
    return 1;
  }
  if (!matched) {
    std::fprintf(stderr, "heddle-bench: unknown suite '%s'; known: %s, all\n", which.c_str(), known.c_str());
    return 2;
  }
  if (!json_file.empty()) {
    std::ofstream out(json_file);
    if (!out) {
      std::fprintf(stderr, "heddle-bench: cannot write %s\n", json_file.c_str());
      return 2;
    }
    out << report.dump(2) << "\n";
  }
  if (!plot_dir.empty()) {
    std::filesystem::create_directories(plot_dir);
    for (auto& [name, suite] : report["suites"].items()) {
      std::ofstream csv(std::filesystem::path(plot_dir) / (name + ".csv"));
      csv << "variant,threads,median_s,min_s,max_s\n";
      for (auto& r : suite["rows"])
        csv << r["variant"].get<std::string>() << "," << r["threads"] << "," << r["median_s"] << "," << r["min_s"]
            << "," << r["max_s"] << "\n";
    }
  }
  return 0;
}
