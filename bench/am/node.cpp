// SPDX-License-Identifier: Apache-2.0
// heddle-bench-am-node: the nodes of the am suite (suite.cpp starts them with heddle-run or mpirun).
// Node 0 measures one of three things and writes it to --json FILE:
//   - (by default) with any number of nodes, a call to every other node, offload::broadcast
//     against a sync call to each in turn, and 64 KiB to and from every other node, scatter and
//     gather against a put or get to each in turn, interleaved round by round in a new order each
//     round (--reps rounds after a warm-up round):
//       {"backend", "results": [{"name", "config", "samples": [seconds per operation, one a round]}]}
//   - --transfers: put and get between node 0 and node 1, from 1 KiB to --max-bytes by 4x: first
//     one put and one get of every size (pages touched, buffers grown), then every (size, put or
//     get) in an order shuffled with --seed, each one untimed and min(200, 64 MiB / size) timed;
//     every get's bytes compared with what the puts wrote. One sample of a round in which
//     heddle-bench am times the raw transfers in processes of their own (raw.cpp, the same sizes,
//     counts and order):
//       {"results": [{"name": "heddle put" or "heddle get", "config": "1 MiB", "seconds": S}]}
//   - --round-trip STRATEGY: an empty offload's round trip with that strategy, or with none
//     ("default"), (a tenth of the timed calls and at least 10 ms to warm up, then the timed calls:
//     --rtt-iterations, a twentieth of them with express), with --busy while node 1's workers run
//     1 ms tasks back to back (a two-hundredth with express), one sample of a round in which heddle-bench am times the
//     raw round trips in processes of their own (raw.cpp): {"seconds_per_round_trip": S}.
//   heddle-bench-am-node --backend NAME --json FILE [--reps N] [--rtt-iterations N]
//                        [--transfers [--max-bytes B] [--seed S] | --round-trip short_task|express|default [--busy]]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <heddle/am.hpp>
#include <heddle/core.hpp>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace off = heddle::offload;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void empty() {}

// Seconds per empty call to node 1 by `call` (sync with a strategy, or with none), waited for:
// `warm` calls untimed and as many more as fill 10 ms (a session just started: what node 1 still
// does then is in no timed call), then n timed.
template <class Call>
double offload_rtt(std::uint64_t warm, std::uint64_t n, Call call) {
  const auto w0 = clock_type::now();
  for (std::uint64_t i = 0; i < warm || clock_type::now() - w0 < std::chrono::milliseconds(10); ++i) call();
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < n; ++i) call();
  return seconds_since(t0) / static_cast<double>(n);
}
double offload_rtt(std::uint64_t warm, std::uint64_t n, const std::string& how) {
  if (how == "default") return offload_rtt(warm, n, [] { off::sync(1, heddle::f2f<&empty>()); });
  const heddle::strategy s = how == "express" ? heddle::strategy::express : heddle::strategy::short_task;
  return offload_rtt(warm, n, [s] { off::sync(1, heddle::f2f<&empty>(), s); });
}

// A busy target (--busy): node 1's workers run long tasks back to back, 1 ms each (asleep: the
// cores stay the round trip's), each starting the next until stop_busy.
std::atomic<bool> busy{false};
void busy_task() {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (busy.load(std::memory_order_relaxed)) (void)heddle::task(busy_task);
}
void start_busy() {
  busy = true;
  for (unsigned i = 0; i < heddle::default_runtime().num_threads(); ++i) (void)heddle::task(busy_task);
}
void stop_busy() { busy = false; }

off::node_id here() { return off::this_node(); }

// A call to every other node: one broadcast along the tree, against one sync call to each node in
// turn (what a program without broadcast writes). Seconds per call to all.
double broadcast_time(std::uint64_t n) {
  (void)off::broadcast(heddle::f2f<&here>(), heddle::strategy::short_task).get();
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < n; ++i)
    if (off::broadcast(heddle::f2f<&here>(), heddle::strategy::short_task).get().size() != off::num_nodes() - 1)
      throw std::runtime_error("a broadcast with a result missing");
  return seconds_since(t0) / static_cast<double>(n);
}
double sequential_time(std::uint64_t n) {
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < n; ++i)
    for (off::node_id k = 1; k < off::num_nodes(); ++k)
      if (off::sync(k, heddle::f2f<&here>(), heddle::strategy::short_task) != k)
        throw std::runtime_error("a call answered from elsewhere");
  return seconds_since(t0) / static_cast<double>(n);
}

// A block of `block` bytes to (scatter) or from (gather) every other node: one group of transfers,
// against one put or get to each node in turn, waited for before the next (what a program without
// scatter and gather writes). Seconds per round over all nodes.
constexpr std::uint64_t block = 64 << 10;
struct blocks {
  std::vector<off::buffer_ptr<char>> remote;  // one per other node
  std::vector<char> local;
  blocks() : local(block * (off::num_nodes() - 1), 'b') {
    for (off::node_id k = 1; k < off::num_nodes(); ++k) remote.push_back(off::allocate<char>(k, block));
  }
  ~blocks() {
    for (const auto& b : remote) off::free(b);
  }
  double scatter(std::uint64_t n) {
    off::scatter(local.data(), remote, block).get();
    const auto t0 = clock_type::now();
    for (std::uint64_t i = 0; i < n; ++i) off::scatter(local.data(), remote, block).get();
    return seconds_since(t0) / static_cast<double>(n);
  }
  double puts(std::uint64_t n) {
    const auto t0 = clock_type::now();
    for (std::uint64_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < remote.size(); ++k) off::put(local.data() + k * block, remote[k], block).get();
    return seconds_since(t0) / static_cast<double>(n);
  }
  double gather(std::uint64_t n) {
    off::gather(remote, local.data(), block).get();
    const auto t0 = clock_type::now();
    for (std::uint64_t i = 0; i < n; ++i) off::gather(remote, local.data(), block).get();
    return seconds_since(t0) / static_cast<double>(n);
  }
  double gets(std::uint64_t n) {
    const auto t0 = clock_type::now();
    for (std::uint64_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < remote.size(); ++k) off::get(remote[k], local.data() + k * block, block).get();
    return seconds_since(t0) / static_cast<double>(n);
  }
};

struct series {
  std::string name, config;
  std::vector<double> samples;
};

// A thing timed once a round: its name in the results and a run returning seconds per operation.
using step = std::pair<std::string, std::function<double()>>;

// Runs every step once (a warm-up round, not kept), then `reps` rounds, each running every step once
// in a new order (a seeded shuffle, the same sequence on every run, as heddle-bench's
// run_interleaved): in a fixed order a step would always follow the same one and pay for what it
// left behind (caches, a socket's or a transport's state). Each kept round's seconds go to
// add(name, config, seconds), so the i-th sample of every step comes from the same round.
template <class Add>
void in_rounds(std::mt19937_64& rng, int reps, const std::string& config, const std::vector<step>& steps, Add&& add) {
  std::vector<std::size_t> order(steps.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> seconds(steps.size());
  for (int r = 0; r <= reps; ++r) {
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    for (std::size_t i : order) seconds[i] = steps[i].second();
    if (r == 0) continue;
    for (std::size_t i = 0; i < steps.size(); ++i) add(steps[i].first, config, seconds[i]);
  }
}

// Put and get of every size, as the header says: the results to write.
nlohmann::json transfers(std::uint64_t max_bytes, std::uint64_t seed) {
  std::vector<char> data(max_bytes), back(max_bytes);
  for (std::uint64_t i = 0; i < max_bytes; ++i) data[i] = static_cast<char>(i * 31 + 7);
  off::buffer_ptr<char> b = off::allocate<char>(1, max_bytes);
  off::put(data.data(), b, max_bytes).get();          // what every get below must read back, whichever runs first
  std::vector<std::pair<std::uint64_t, bool>> steps;  // (bytes, put)
  for (std::uint64_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    off::put(data.data(), b, bytes).get();  // the warm-up: one of each
    off::get(b, back.data(), bytes).get();
    steps.emplace_back(bytes, true);
    steps.emplace_back(bytes, false);
  }
  std::mt19937_64 rng(seed);
  for (std::size_t i = steps.size(); i > 1; --i) std::swap(steps[i - 1], steps[rng() % i]);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [bytes, put] : steps) {
    const std::uint64_t k = std::max<std::uint64_t>(1, std::min<std::uint64_t>(200, (std::uint64_t{64} << 20) / bytes));
    const std::string config = bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB"
                                                   : std::to_string(bytes >> 10) + " KiB";
    double sec = 0;
    if (put) {
      off::put(data.data(), b, bytes).get();  // untimed
      const auto t0 = clock_type::now();
      for (std::uint64_t i = 0; i < k; ++i) off::put(data.data(), b, bytes).get();
      sec = seconds_since(t0) / static_cast<double>(k);
    } else {
      off::get(b, back.data(), bytes).get();  // untimed
      std::memset(back.data(), 0, bytes);     // the timed gets' bytes are checked, not what was there
      const auto t0 = clock_type::now();
      for (std::uint64_t i = 0; i < k; ++i) off::get(b, back.data(), bytes).get();
      sec = seconds_since(t0) / static_cast<double>(k);
      if (std::memcmp(back.data(), data.data(), bytes) != 0)
        throw std::runtime_error("get returned other bytes than put wrote (" + config + ")");
    }
    results.push_back({{"name", put ? "heddle put" : "heddle get"}, {"config", config}, {"seconds", sec}});
  }
  off::free(b);
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name, json_file, round_trip;
  int reps = 5;
  std::uint64_t rtt_n = 20000, max_bytes = std::uint64_t{64} << 20, seed = 1;
  try {
    off::session s(argc, argv);
    if (off::this_node() != 0) return s.serve();
    CLI::App app{"heddle-bench-am-node: node 0 of heddle-bench am"};
    app.add_option("--backend", backend_name)->required();
    app.add_option("--json", json_file)->required();
    app.add_option("--reps", reps);
    app.add_option("--rtt-iterations", rtt_n)->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
    bool do_transfers = false;
    auto* transfers_flag = app.add_flag("--transfers", do_transfers,
                                        "time only put and get to node 1, one sample of each");
    app.add_option("--max-bytes", max_bytes, "the largest transfer")
        ->check(CLI::Range(std::uint64_t{1024}, std::uint64_t{1} << 30))
        ->needs(transfers_flag);
    app.add_option("--seed", seed, "the seed of the transfers' order")->needs(transfers_flag);
    auto* trip = app.add_option("--round-trip", round_trip,
                                "time only an empty offload's round trip with this strategy (default: none given)")
                     ->check(CLI::IsMember({"short_task", "express", "default"}))
                     ->excludes(transfers_flag);
    bool busy_target = false;
    app.add_flag("--busy", busy_target, "node 1's workers run 1 ms tasks back to back meanwhile")->needs(trip);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);  // --help, or what is wrong with the command line
    }
    if (!round_trip.empty()) {
      // express hands the call to a worker, tens of times slower: a twentieth of the calls (a
      // two-hundredth with the workers busy, where it waits for the end of a 1 ms task).
      const bool express = round_trip == "express";
      const std::uint64_t n = express ? rtt_n / (busy_target ? 200 : 20) + 1 : rtt_n;
      if (busy_target) off::sync(1, heddle::f2f<&start_busy>(), heddle::strategy::short_task);
      const double sec = offload_rtt(n / 10 + 1, n, round_trip);
      if (busy_target) off::sync(1, heddle::f2f<&stop_busy>(), heddle::strategy::short_task);
      std::ofstream(json_file) << nlohmann::json{{"seconds_per_round_trip", sec}}.dump() << "\n";
      return 0;
    }
    if (do_transfers) {
      if (off::num_nodes() != 2) throw std::runtime_error("--transfers: run it as 2 nodes");
      std::ofstream(json_file) << nlohmann::json{{"results", transfers(max_bytes, seed)}}.dump(1) << "\n";
      return 0;
    }

    std::vector<series> out;
    auto add = [&](const std::string& name, const std::string& config, double v) {
      for (series& x : out)
        if (x.name == name && x.config == config) return x.samples.push_back(v);
      out.push_back({name, config, {v}});
    };
    std::mt19937_64 rng(20261207);
    // Calls to every other node: broadcast against sequential calls.
    const std::uint64_t calls = rtt_n / 10 + 1;
    in_rounds(rng, reps, std::to_string(off::num_nodes()) + " nodes, a call to all others",
              {{"heddle broadcast (short_task)", [&] { return broadcast_time(calls); }},
               {"sync to each node in turn (short_task)", [&] { return sequential_time(calls); }}},
              add);
    {
      blocks b;
      const std::uint64_t rounds = rtt_n / 100 + 1;
      in_rounds(rng, reps, std::to_string(off::num_nodes()) + " nodes, 64 KiB to or from all others",
                {{"heddle scatter", [&] { return b.scatter(rounds); }},
                 {"put to each node in turn", [&] { return b.puts(rounds); }},
                 {"heddle gather", [&] { return b.gather(rounds); }},
                 {"get from each node in turn", [&] { return b.gets(rounds); }}},
                add);
    }
    nlohmann::json j{{"backend", backend_name}, {"results", nlohmann::json::array()}};
    for (const series& x : out)
      j["results"].push_back({{"name", x.name}, {"config", x.config}, {"samples", x.samples}});
    std::ofstream(json_file) << j.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench-am-node: %s\n", e.what());
    return 1;
  }
}
