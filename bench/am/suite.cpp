// SPDX-License-Identifier: Apache-2.0
// The am suite: HAM's Table 1 and Figure 6 on this machine. For each backend (shm and tcp under
// heddle-run, mpi under mpirun) it times an empty offload's round trip against the raw transport's
// best round trip, and put/get from 1 KiB up against raw transfers:
//   - the round trips, one launch a sample, in rounds of a new order each (run_interleaved): two
//     nodes of heddle-bench-am-node timing offloads (--round-trip), and for every raw way two
//     processes of heddle-bench-am-raw without heddle (raw.cpp); the fastest raw way (lowest
//     median) is the reference, and the offload's time over it, and its time minus it, are formed
//     round by round;
//   - the transfers, put and get from 1 KiB up, in the same way: a launch of the two nodes
//     (--transfers) and of every raw way (heddle-bench-am-raw, without heddle), each one sample of
//     every size and direction, in rounds of a new order each; the fastest raw way of each size and
//     direction is the reference, and the transfer's bandwidth over it is formed round by round;
//   - calls and transfers to every other node, in one launch of the nodes at each node count, which
//     time them in rounds of a new order each (node.cpp).
// It prints the tables and records the figures with their intervals and, for the headline ones,
// their targets and verdicts.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "table.hpp"

namespace heddle::bench::am {

namespace {

namespace fs = std::filesystem;

fs::path own_folder() { return fs::read_symlink("/proc/self/exe").parent_path(); }

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// mpirun as this VM runs it: as root, the ranks talking through shared memory (ob1 and vader), more
// ranks than cores allowed (the 4- and 8-node runs). The rank count follows.
const char* const mpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader "
    "OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np ";

// The command that starts `nodes` processes of `program` as the nodes of a `backend` session:
// mpirun for mpi, heddle-run for shm and tcp.
std::string launch(const std::string& backend, int nodes, const fs::path& program) {
  if (backend == "mpi") return mpirun + std::to_string(nodes) + " " + shell_quote(program.string());
  return shell_quote((own_folder() / "heddle-run").string()) + " -n " + std::to_string(nodes) + " --backend " +
         backend + " --timeout 900 " + shell_quote(program.string());
}

// Runs `cmd` with " --json FILE" appended and returns what it wrote to FILE; std::runtime_error,
// naming `what`, when it fails or writes nothing.
nlohmann::json run_for_json(const std::string& cmd, const std::string& what) {
  static int runs = 0;
  const fs::path json = fs::temp_directory_path() /
                        ("heddle-bench-am-" + std::to_string(::getpid()) + "-" + std::to_string(runs++) + ".json");
  const std::string line = cmd + " --json " + shell_quote(json.string());
  std::fflush(stdout);
  if (const int rc = std::system(line.c_str()); rc != 0)
    throw std::runtime_error("am: " + what + " failed (status " + std::to_string(rc) + "): " + line);
  std::ifstream in(json);
  if (!in) throw std::runtime_error("am: " + what + " wrote no " + json.string());
  nlohmann::json j = nlohmann::json::parse(in);
  fs::remove(json);
  return j;
}

// A time the programs measured must be a time: positive and finite.
double checked_time(double v, const std::string& what) {
  if (!(v > 0) || !std::isfinite(v)) throw std::runtime_error("am: " + what + " measured " + std::to_string(v));
  return v;
}

// Runs `nodes` nodes for `backend`, timing the calls and transfers to all other nodes: node 0's
// results, as harness results (threads = the nodes), each sample from one round.
std::vector<result> run_backend(const std::string& backend, const options& opt, int nodes) {
  const int reps = opt.check ? 1 : opt.reps;
  const std::string cmd = launch(backend, nodes, own_folder() / "heddle-bench-am-node") + " --backend " + backend +
                          " --reps " + std::to_string(reps) + " --rtt-iterations " +
                          std::to_string(opt.pick(200, 5000, 20000, 100000));
  const nlohmann::json j = run_for_json(cmd, "the " + backend + " nodes");
  std::vector<result> rs;
  for (const auto& r : j.at("results")) {
    result x{r.at("name").get<std::string>(), static_cast<unsigned>(nodes),
             backend + " " + r.at("config").get<std::string>(), r.at("samples").get<std::vector<double>>()};
    for (double v : x.samples) checked_time(v, x.name + " " + x.config);
    rs.push_back(std::move(x));
  }
  return rs;
}

// A raw round trip heddle-bench-am-raw times (its --way) and its name in tables.
struct raw_way {
  const char* way;
  const char* name;
};

// Every raw way of `backend`'s transport; the fastest (lowest median) is the offload's reference.
// The first is the baseline the others are compared with in figures of fixed names: on shm the
// way this suite measured before (adjacent lines, a pause), on tcp and mpi the blocking calls.
std::vector<raw_way> raw_ways(const std::string& backend) {
  if (backend == "shm")
    return {{"shm-pause-lines-64-apart", "raw shm flags, lines 64 B apart, pause"},
            {"shm-pause-one-line", "raw shm flags, one line, pause"},
            {"shm-spin-one-line", "raw shm flags, one line, spin"},
            {"shm-spin-lines-64-apart", "raw shm flags, lines 64 B apart, spin"},
            {"shm-pause-lines-128-apart", "raw shm flags, lines 128 B apart, pause"},
            {"shm-spin-lines-128-apart", "raw shm flags, lines 128 B apart, spin"}};
  if (backend == "tcp")
    return {{"tcp-blocking", "raw TCP socket, blocking recv"}, {"tcp-polled", "raw TCP socket, polled recv"}};
  return {{"mpi-blocking", "raw MPI_Send/MPI_Recv"}, {"mpi-posted", "raw MPI_Send, MPI_Irecv posted ahead, MPI_Test"}};
}

// An empty offload's round trip, short_task, express and with no strategy (the default rule), the
// last two also with node 1's workers busy (heddle-bench-am-node --round-trip [--busy]), and
// every raw way's (heddle-bench-am-raw, two processes without heddle: mpirun for mpi, a fork for
// shm and tcp), each launch one sample, run_interleaved: a warm-up launch of each, then rounds of one
// launch each in a new order. So the i-th sample of each is from the same round, and a figure
// comparing two is formed round by round.
std::vector<result> round_trips(const std::string& backend, const options& opt) {
  const std::string config = backend + " empty round trip", n = std::to_string(opt.pick(200, 5000, 20000, 100000));
  std::vector<variant> vs;
  auto add = [&](const std::string& name, const std::string& cmd) {
    vs.push_back({name, 2, config, [name, cmd, config] {
                    return checked_time(run_for_json(cmd, name).at("seconds_per_round_trip").get<double>(),
                                        name + " " + config);
                  }});
  };
  for (const char* how : {"short_task", "express", "default"})
    add(std::string("heddle offload (") + how + ")", launch(backend, 2, own_folder() / "heddle-bench-am-node") +
                                                         " --backend " + backend + " --round-trip " + how +
                                                         " --rtt-iterations " + n);
  for (const char* how : {"express", "default"})
    add(std::string("heddle offload (") + how + ", busy target)",
        launch(backend, 2, own_folder() / "heddle-bench-am-node") + " --backend " + backend + " --round-trip " + how +
            " --busy --rtt-iterations " + n);
  const std::string raw = shell_quote((own_folder() / "heddle-bench-am-raw").string());
  for (const raw_way& w : raw_ways(backend))
    add(w.name, (backend == "mpi" ? mpirun + std::string("2 ") : std::string()) + raw + " --way " + w.way +
                    " --round-trips " + n);
  return run_interleaved(vs, opt.check ? 1 : opt.reps);
}

// The raw transfer ways of `backend`'s transport (heddle-bench-am-raw --way): of each size and
// direction, the fastest (lowest median) is the reference. shm: memcpy alone, as heddle's direct
// path, and memcpy with a flag handshake each block; tcp: send/recv, recv blocking or polled (as
// heddle's); mpi: MPI_Send/MPI_Recv,
// and MPI_Isend/MPI_Irecv with every receive posted ahead.
std::vector<std::string> raw_transfer_ways(const std::string& backend) {
  if (backend == "shm") return {"shm-transfer", "shm-transfer-handshake"};
  if (backend == "tcp") return {"tcp-transfer", "tcp-transfer-polled"};
  return {"mpi-transfer-blocking", "mpi-transfer-posted"};
}

// Put and get (heddle-bench-am-node --transfers, two nodes) and every raw transfer way
// (heddle-bench-am-raw, two processes without heddle), each launch one sample of every size and
// direction, run_interleaved: a warm-up launch of each, then rounds of one launch each in a new
// order. Every launch gets a seed of its own for the order of its sizes and directions. A row per
// program, size and direction ("heddle put", "raw MPI_Send/MPI_Recv 0→1"; config "<backend> 1 MiB"),
// its i-th sample from the i-th round: a figure comparing two is formed round by round.
std::vector<result> transfers(const std::string& backend, const options& opt) {
  const std::string max_bytes = std::to_string(opt.pick(std::uint64_t{64} << 10, std::uint64_t{16} << 20,
                                                        std::uint64_t{64} << 20, std::uint64_t{64} << 20));
  // Each variant's launches' results, the warm-up's first; the seed of the next launch.
  auto launches = std::make_shared<std::vector<std::vector<nlohmann::json>>>();
  auto seed = std::make_shared<std::uint64_t>(20261208);
  std::vector<variant> vs;
  auto add = [&](const std::string& name, const std::string& cmd) {
    const std::size_t at = launches->size();
    launches->emplace_back();
    vs.push_back(
        {name, 2, backend + " transfers", [=] {
           nlohmann::json rows = run_for_json(cmd + " --seed " + std::to_string((*seed)++), name).at("results");
           double total = 0;  // what run_interleaved keeps: nothing reads it
           for (const auto& r : rows)
             total += checked_time(r.at("seconds").get<double>(), r.at("name").get<std::string>() + " " + backend +
                                                                      " " + r.at("config").get<std::string>());
           (*launches)[at].push_back(std::move(rows));
           return total;
         }});
  };
  add("heddle put and get", launch(backend, 2, own_folder() / "heddle-bench-am-node") + " --backend " + backend +
                                " --transfers --max-bytes " + max_bytes);
  const std::string raw = shell_quote((own_folder() / "heddle-bench-am-raw").string());
  for (const std::string& way : raw_transfer_ways(backend))
    add(way, (backend == "mpi" ? mpirun + std::string("2 ") : std::string()) + raw + " --way " + way + " --max-bytes " +
                 max_bytes);
  (void)run_interleaved(vs, opt.check ? 1 : opt.reps);
  std::vector<result> rs;
  for (const auto& runs : *launches)
    for (std::size_t i = 1; i < runs.size(); ++i)  // the warm-up's not kept
      for (const auto& r : runs[i]) {
        const std::string name = r.at("name").get<std::string>(),
                          config = backend + " " + r.at("config").get<std::string>();
        auto row = std::find_if(rs.begin(), rs.end(),
                                [&](const result& x) { return x.name == name && x.config == config; });
        if (row == rs.end()) row = rs.insert(rs.end(), result{name, 2, config, {}});
        row->samples.push_back(r.at("seconds").get<double>());
      }
  for (const result& r : rs)
    if (r.samples.size() != static_cast<std::size_t>(opt.check ? 1 : opt.reps))
      throw std::runtime_error("am: " + r.name + " " + r.config + " was not measured in every round");
  return rs;
}

// Calls and transfers to every other node against the same done node by node, at every node count
// measured: a table each, and <backend>_<what>_vs_<reference>_<N>nodes, the group's time over the
// reference's round by round (< 1: the group is faster).
void report_to_all(nlohmann::json& report, const std::string& backend, const std::vector<result>& rows,
                   const std::string& group, const std::string& in_turn, const std::string& ratio_name,
                   const std::string& what) {
  std::printf("### %s: %s, %s against %s\n\n", backend.c_str(), what.c_str(), group.c_str(), in_turn.c_str());
  std::printf("| nodes | %s (µs) | %s (µs) | ratio per round (95 %% interval) |\n|---|---|---|---|\n", group.c_str(),
              in_turn.c_str());
  std::vector<std::pair<std::string, estimate>> figures;
  for (const result& all : rows) {
    if (all.name.rfind(group, 0) != 0) continue;
    for (const result& each : rows) {
      if (each.config != all.config || each.name.rfind(in_turn, 0) != 0) continue;
      const estimate ratio = paired_ratio(all, each);
      std::printf("| %u | %.1f | %.1f | %.2f (%.2f–%.2f) |\n", all.threads, all.median() * 1e6, each.median() * 1e6,
                  ratio.value, ratio.lo, ratio.hi);
      figures.emplace_back(std::to_string(all.threads), ratio);
    }
  }
  std::printf("\n");
  for (const auto& [nodes, ratio] : figures)
    add_figure(report, backend + "_" + ratio_name + "_" + nodes + "nodes", ratio,
               group + "'s time for " + what + ", over " + in_turn + ", per round, " + nodes + " " + backend +
                   " nodes (< 1: " + group + " is faster)");
}

void report_calls_to_all(nlohmann::json& report, const std::string& backend, const std::vector<result>& rows) {
  report_to_all(report, backend, rows, "heddle broadcast", "sync to each node in turn", "broadcast_vs_sequential",
                "an empty call to every other node");
  report_to_all(report, backend, rows, "heddle scatter", "put to each node in turn", "scatter_vs_puts",
                "64 KiB to every other node");
  report_to_all(report, backend, rows, "heddle gather", "get from each node in turn", "gather_vs_gets",
                "64 KiB from every other node");
}

// The row of `config` whose name starts with `prefix`; of several, the one with the lowest median
// (the raw transport's best way is the reference).
const result* find_row(const std::vector<result>& rs, const std::string& prefix, const std::string& config) {
  const result* best = nullptr;
  for (const result& r : rs)
    if (r.name.rfind(prefix, 0) == 0 && r.config == config && (!best || r.median() < best->median())) best = &r;
  return best;
}

// The bytes of a transfer row's config ("shm 4 KiB", "mpi 16 MiB"); 0 for a round-trip row.
std::uint64_t transfer_bytes(const std::string& config) {
  unsigned long long n = 0;
  char unit[4] = {};
  if (std::sscanf(config.c_str(), "%*s %llu %3s", &n, unit) != 2) return 0;
  const std::string u = unit;
  return u == "KiB" ? n << 10 : u == "MiB" ? n << 20 : 0;
}

// The raw transfer of `config` in the direction of `variant`: out of node 0 (0→1) for put, into it
// (1→0) for get; of several raw ways, the fastest (lowest median).
const result* raw_for(const std::vector<result>& rs, const std::string& variant, const std::string& config) {
  const std::string direction = variant.find("get") != std::string::npos || variant.find("1→0") != std::string::npos
                                    ? "1→0"
                                    : "0→1";
  const result* best = nullptr;
  for (const result& r : rs)
    if (r.name.rfind("raw", 0) == 0 && r.config == config && r.name.find(direction) != std::string::npos &&
        (!best || r.median() < best->median()))
      best = &r;
  return best;
}

// A transfer's bytes/s over the raw transfer's (same size, same direction), round by round: the
// raw transfer's time over the transfer's (> 1: faster than raw).
estimate bw_vs_raw(const result& transfer, const result& raw) {
  return paired(transfer, raw, [](double t, double r) { return r / t; });
}

// HAM's Figure 6: each transfer row as bandwidth (GiB/s at the median) against its size, and its
// bandwidth over the raw reference's of the same size and direction (bw_vs_raw, the median of the
// rounds' ratios, with its 95 % interval; > 1: faster than raw).
nlohmann::json bandwidth_table(const std::string& backend, const std::vector<result>& transfers) {
  nlohmann::json rows = nlohmann::json::array();
  for (const result& r : transfers) {
    const std::uint64_t bytes = transfer_bytes(r.config);
    const result* raw = raw_for(transfers, r.name, r.config);
    if (!bytes || !raw) continue;
    const estimate e = bw_vs_raw(r, *raw);
    rows.push_back({{"backend", backend},
                    {"variant", r.name},
                    {"bytes", bytes},
                    {"gib_per_s", static_cast<double>(bytes) / r.median() / double(1u << 30)},
                    {"raw_reference", raw->name},
                    {"bw_vs_raw", e.value},
                    {"bw_vs_raw_lo", e.lo},
                    {"bw_vs_raw_hi", e.hi}});
  }
  return rows;
}

// What the offload may add to its transport's raw round trip, in ns (HAM adds <= 40 over the same
// Open MPI; docs/benchmarks.md's summary states these).
double added_ns_target(const std::string& backend) { return backend == "shm" ? 60 : backend == "mpi" ? 100 : 1000; }

// A way's name of raw.cpp in a figure's name: "shm-spin-one-line" → "shm_spin_one_line", or
// "spin_one_line" without_transport.
std::string figure_name(std::string way, bool without_transport = false) {
  if (without_transport) way.erase(0, way.find('-') + 1);
  for (char& c : way)
    if (c == '-') c = '_';
  return way;
}

// The round trips: a table, every raw way against the first (raw_<way>_vs_<first way>), and the
// offload against the reference (the fastest raw way), round by round. Returns the reference's name.
std::string report_round_trips(nlohmann::json& report, const std::string& backend, const std::vector<result>& trips) {
  const std::string config = backend + " empty round trip";
  const result* ref = find_row(trips, "raw", config);
  const result* inl = find_row(trips, "heddle offload (short_task)", config);
  const result* exp = find_row(trips, "heddle offload (express)", config);
  const result* def = find_row(trips, "heddle offload (default)", config);
  const result* exp_busy = find_row(trips, "heddle offload (express, busy target)", config);
  const result* def_busy = find_row(trips, "heddle offload (default, busy target)", config);
  if (!ref || !inl || !exp || !def || !exp_busy || !def_busy)
    throw std::runtime_error("am: " + backend + ": missing round-trip rows");
  std::printf("### %s: round trips (raw: two processes without heddle; the reference is the fastest raw way)\n\n%s\n",
              backend.c_str(), markdown_table(trips, ref->name).c_str());
  const std::vector<raw_way> ways = raw_ways(backend);
  for (const raw_way& w : ways) {
    const result& r = find(trips, w.name, 2, config);
    std::printf("raw way: %s, median %.0f ns (%.0f–%.0f)%s\n", w.name, r.median() * 1e9, r.min() * 1e9, r.max() * 1e9,
                &r == ref ? ": the reference" : "");
  }
  const result& first = find(trips, ways.front().name, 2, config);
  for (const raw_way& w : ways)
    if (&w != &ways.front())
      add_figure(report, "raw_" + figure_name(w.way) + "_vs_" + figure_name(ways.front().way, true),
                 paired_ratio(find(trips, w.name, 2, config), first),
                 "the round trip of " + std::string(w.name) + " over that of " + first.name +
                     ", per round (< 1: faster)");
  const estimate added = paired(*inl, *ref, [](double o, double r) { return (o - r) * 1e9; });
  std::printf("round trip: raw reference %.0f ns (%s), offload %.0f ns short_task (added %.0f ns per round, %.0f to "
              "%.0f), %.0f ns express\n",
              ref->median() * 1e9, ref->name.c_str(), inl->median() * 1e9, added.value, added.lo, added.hi,
              exp->median() * 1e9);
  add_figure(report, backend + "_offload_vs_raw", paired_ratio(*inl, *ref),
             "an empty offload's round-trip time (short_task, HAM's inline mode) over the raw " + backend +
                 " round trip's (the fastest raw way: " + ref->name + "), per round (< 1: faster than raw)",
             at_most(1.10));
  add_figure(report, backend + "_offload_added_ns", added,
             "an empty offload's round trip (short_task) minus the raw " + backend + " round trip's (" + ref->name +
                 "), per round, in ns",
             at_most(added_ns_target(backend)));
  add_figure(report, backend + "_offload_express_vs_raw", paired_ratio(*exp, *ref),
             "the same time with express (a worker runs the function), per round");
  const estimate def_added = paired(*def, *ref, [](double o, double r) { return (o - r) * 1e9; });
  std::printf("round trip with no strategy (the default rule): %.0f ns (added %.0f ns per round, %.0f to %.0f); "
              "busy target: %.0f ns, express %.0f ns\n",
              def->median() * 1e9, def_added.value, def_added.lo, def_added.hi, def_busy->median() * 1e9,
              exp_busy->median() * 1e9);
  add_figure(report, backend + "_offload_default_vs_raw", paired_ratio(*def, *ref),
             "the same time with no strategy given (the default rule: a short function runs on the receiving "
             "thread), per round",
             at_most(2.0));
  add_figure(report, backend + "_offload_default_added_ns", def_added,
             "an empty offload's round trip with no strategy minus the raw " + backend +
                 " round trip's, per round, in ns");
  add_figure(report, backend + "_offload_default_vs_express_busy", paired_ratio(*def_busy, *exp_busy),
             "an empty offload's round trip with no strategy over express's while the target's workers run 1 ms "
             "tasks back to back, per round",
             at_most(1.0));
  std::printf("\n");
  return ref->name;
}

void run(const options& opt, nlohmann::json& report) {
  std::printf("## am: an empty offload's round trip and put/get against the raw transport (2 nodes) %s\n\n",
              opt.scale_name());
  std::vector<result> all;
  nlohmann::json bandwidth = nlohmann::json::array(), references = nlohmann::json::object();
  for (const std::string backend : {"shm", "tcp", "mpi"}) {
    // Calls to all nodes: at 2, 4 and 8 nodes (the last two oversubscribed).
    std::vector<result> to_all;
    for (int n : {2, 4, 8})
      for (result& r : run_backend(backend, opt, n)) to_all.push_back(std::move(r));
    report_calls_to_all(report, backend, to_all);
    const std::vector<result> trips = round_trips(backend, opt);
    references[backend] = report_round_trips(report, backend, trips);
    // The transfers against their raw reference.
    std::vector<result> rs = transfers(backend, opt);
    std::sort(rs.begin(), rs.end(), [](const result& a, const result& b) {
      return a.name != b.name ? a.name < b.name : transfer_bytes(a.config) < transfer_bytes(b.config);
    });
    const result* raw_transfer = rs.empty() ? nullptr : raw_for(rs, "heddle put", rs.front().config);
    if (raw_transfer)
      std::printf("### %s: transfers\n\n%s\n", backend.c_str(), markdown_table(rs, raw_transfer->name).c_str());
    const std::string mib = backend + " 1 MiB";
    const result* put = find_row(rs, "heddle put", mib);
    const result* get = find_row(rs, "heddle get", mib);
    const result* raw_out = put ? raw_for(rs, put->name, mib) : nullptr;
    const result* raw_in = get ? raw_for(rs, get->name, mib) : nullptr;
    if (raw_out && raw_in) {
      add_figure(report, backend + "_put_bw_1MiB_vs_raw", bw_vs_raw(*put, *raw_out),
                 "put's bytes/s at 1 MiB over the raw " + backend +
                     " transfer's in the same direction (the fastest raw way: " + raw_out->name +
                     "), per round (> 1: faster than raw)",
                 at_least(0.90));
      add_figure(report, backend + "_get_bw_1MiB_vs_raw", bw_vs_raw(*get, *raw_in),
                 "get's bytes/s at 1 MiB over the raw " + backend +
                     " transfer's in the same direction (the fastest raw way: " + raw_in->name +
                     "), per round (> 1: faster than raw)",
                 at_least(0.90));
    }
    std::printf("\n");
    for (auto& row : bandwidth_table(backend, rs)) bandwidth.push_back(std::move(row));
    all.insert(all.end(), trips.begin(), trips.end());
    all.insert(all.end(), rs.begin(), rs.end());
    all.insert(all.end(), to_all.begin(), to_all.end());
  }
  add_suite(report, "am", all,
            {{"unit", "s per operation"},
             {"plot_rows", false},
             {"raw_round_trip_reference", references},
             {"tables", {{"bandwidth", bandwidth}}}});
}

const registration reg{
    {"am", 90, "active messages: offload round trip and put/get bandwidth vs raw shm, TCP and MPI", &run}};

}  // namespace

}  // namespace heddle::bench::am
