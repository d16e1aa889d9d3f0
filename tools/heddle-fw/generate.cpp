// SPDX-License-Identifier: Apache-2.0
// heddle-fw generate: a CMS-like configuration, made here from the statistics of the study's real
// reconstruction configurations (not a copy of them): ~480 producers whose mean times are
// log-normal (the real ones: e^-7.1 and e^-7.8 s geometric means, sigma 2.6-3.0, a few of a
// second or more), per-event times varying around the mean (median coefficient of variation
// 0.45-0.63), about 2.6 inputs per producer drawn mostly from recent producers (dependency chains
// ~80 deep), a handful of thread-unsafe modules, and two paths whose filters get half of all
// products, as the output modules of the real jobs do. make demo runs heddle-fw on it.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "heddle/fw.hpp"
#include "numeric_options.hpp"
#include "run_command.hpp"
#include "study.hpp"

namespace heddle::fw::tool {

namespace {

struct gen_settings {
  unsigned producers = 480;
  std::uint64_t events = 100;
  std::uint64_t seed = 2012;
  double time_scale = 5e-3;
  std::string out = "cms_like.json";
};

nlohmann::json generate(const gen_settings& s) {
  std::mt19937_64 rng(s.seed);
  std::lognormal_distribution<double> mean_time(-7.4, 2.8);
  std::uniform_real_distribution<double> u(0, 1);
  const double cv = 0.55, noise_sigma = std::sqrt(std::log(1 + cv * cv));
  std::lognormal_distribution<double> noise(-noise_sigma * noise_sigma / 2, noise_sigma);
  std::geometric_distribution<int> extra_inputs(1 / 2.6);  // 1 + this: mean ~2.6 inputs
  std::geometric_distribution<int> distance(1 / 12.0);     // how far back an input usually is

  auto label = [](unsigned i) { return "reco" + std::to_string(i); };
  nlohmann::json producers = nlohmann::json::array();
  for (unsigned i = 0; i < s.producers; ++i) {
    const double mean = std::min(3.0, mean_time(rng));
    nlohmann::json times = nlohmann::json::array();
    for (int e = 0; e < 100; ++e) times.push_back(mean * noise(rng));
    nlohmann::json inputs = nlohmann::json::array();
    if (i >= 9) {  // the first few read only the event itself, as the real jobs' unpackers do
      std::vector<unsigned> picked;
      for (int k = 1 + extra_inputs(rng); k > 0; --k) {
        unsigned j = u(rng) < 0.25 ? unsigned(u(rng) * i) : i - 1 - std::min<unsigned>(i - 1, unsigned(distance(rng)));
        if (std::find(picked.begin(), picked.end(), j) == picked.end()) picked.push_back(j);
      }
      for (unsigned j : picked) inputs.push_back({{"label", label(j)}, {"product", ""}});
    }
    // A few thread-unsafe modules (trigger bookkeeping in the real jobs) and one that is safe only
    // between modules, all quick.
    const char* threads = "ThreadSafeBetweenInstances";
    if (i % 120 == 60) threads = "ThreadUnsafe";
    if (i == s.producers / 2 + 1) threads = "ThreadSafeBetweenModules";
    producers.push_back({{"@label", label(i)},
                         {"@type", "demo::EventTimesBusyWaitProducer"},
                         {"threadType", threads},
                         {"eventTimes", times},
                         {"toGet", inputs}});
  }
  nlohmann::json filters = nlohmann::json::array(), paths = nlohmann::json::object();
  for (const char* name : {"outputRECO", "outputAOD"}) {
    nlohmann::json inputs = nlohmann::json::array();
    for (unsigned i = 0; i < s.producers; ++i)
      if (u(rng) < 0.5) inputs.push_back({{"label", label(i)}, {"product", ""}});
    nlohmann::json times = nlohmann::json::array();
    const double mean = 0.3 + 0.4 * u(rng);  // the real jobs' output modules: ~0.5 s
    for (int e = 0; e < 100; ++e) times.push_back(mean * noise(rng));
    filters.push_back({{"@label", name},
                       {"@type", "demo::EventTimesBusyWaitPassFilter"},
                       {"threadType", "ThreadSafeBetweenInstances"},
                       {"eventTimes", times},
                       {"toGet", inputs}});
    paths[std::string("p_") + name] = nlohmann::json::array({name});
  }
  return {{"process",
           {{"label", "CMSLIKE"},
            {"options", {{"nSimultaneousEvents", 4}, {"busyWaitScaleFactor", 2.2e7}, {"timeScale", s.time_scale}}},
            {"source", {{"@type", "demo::SimpleSource"}, {"iterations", s.events}}},
            {"producers", producers},
            {"filters", filters},
            {"paths", paths}}}};
}

}  // namespace

int generate_main(int argc, char** argv) {
  CLI::App app{"heddle-fw generate: a CMS-like configuration with the statistics of the study's real ones"};
  app.name("heddle-fw generate");
  gen_settings s;
  app.add_option("--producers", s.producers, "producers (default 480)")->check(heddle::tool::whole_number(10, 100000));
  app.add_option("--events", s.events, "source.iterations (default 100)")
      ->check(heddle::tool::whole_number(1, UINT64_MAX));
  app.add_option("--seed", s.seed, "random seed (default 2012)")->check(heddle::tool::whole_number(0, UINT64_MAX));
  app.add_option("--time-scale", s.time_scale, "options.timeScale (default 5e-3: ~60 ms of work per event)")
      ->check(heddle::tool::real_number(false));
  app.add_option("-o,--out", s.out, "file to write (default cms_like.json)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  const nlohmann::json config = generate(s);
  std::ofstream out(s.out);
  out << config.dump(1) << '\n';
  if (!out.flush()) {
    std::fprintf(stderr, "heddle-fw generate: error: %s: cannot write\n", s.out.c_str());
    return 2;
  }
  // Check it as heddle-fw will read it, and say what it is.
  try {
    const process_config c = load_config(s.out);
    const dependency_bound b = study::analyse_dependencies(c, 1, 100);
    std::printf(
        "heddle-fw generate: %s: %u producers, %.2f s of work and a %.2f s critical path per event (ratio %.2f)\n",
        s.out.c_str(), s.producers, b.work_s() / 100, b.critical_path_s() / 100, b.work_s() / b.critical_path_s());
  } catch (const config_error& x) {
    std::fprintf(stderr, "heddle-fw generate: error: %s\n", x.what());
    return 1;
  }
  return 0;
}

}  // namespace heddle::fw::tool
