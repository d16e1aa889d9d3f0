// The am suite: HAM's Table 1 and Figure 6 on this machine. For each backend (shm and tcp under
// heddle-run, mpi under mpirun) it starts two nodes of heddle-bench-am-node (node.cpp), which time
// an empty offload's round trip and put/get from 1 KiB up against the raw transport between the
// same two processes, interleaved round by round; this prints the medians and the ratios.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
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

// Runs `nodes` nodes for `backend` (only the calls and transfers to all nodes with only_all_nodes); node 0's
// results, as harness results (threads = the nodes).
std::vector<result> run_backend(const std::string& backend, const options& opt, int nodes = 2, bool only_all_nodes = false) {
  const fs::path bin = own_folder();
  const fs::path node = bin / "heddle-bench-am-node";
  const fs::path json = fs::temp_directory_path() /
                        ("heddle-bench-am-" + std::to_string(::getpid()) + "-" + backend + "-" + std::to_string(nodes) + ".json");
  const int reps = opt.check ? 1 : opt.reps;
  const std::string args = " --backend " + backend + " --json " + shell_quote(json.string()) + " --reps " + std::to_string(reps) +
                           " --rtt-iterations " + std::to_string(opt.pick(200, 5000, 20000, 100000)) + " --max-bytes " +
                           std::to_string(opt.pick(std::uint64_t{64} << 10, std::uint64_t{16} << 20, std::uint64_t{64} << 20,
                                                   std::uint64_t{64} << 20)) +
                           (only_all_nodes ? " --only-all-nodes" : "");
  std::string cmd;
  if (backend == "mpi") {
    cmd = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader "
          "OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np " + std::to_string(nodes) + " " + shell_quote(node.string()) + args;
  } else {
    cmd = shell_quote((bin / "heddle-run").string()) + " -n " + std::to_string(nodes) + " --backend " + backend + " --timeout 900 " + shell_quote(node.string()) + args;
  }
  std::fflush(stdout);
  if (const int rc = std::system(cmd.c_str()); rc != 0)
    throw std::runtime_error("am: the " + backend + " nodes failed (status " + std::to_string(rc) + "): " + cmd);
  std::ifstream in(json);
  if (!in) throw std::runtime_error("am: the " + backend + " nodes wrote no " + json.string());
  const nlohmann::json j = nlohmann::json::parse(in);
  fs::remove(json);
  std::vector<result> rs;
  for (const auto& r : j.at("results")) {
    result x{r.at("name").get<std::string>(), static_cast<unsigned>(nodes), backend + " " + r.at("config").get<std::string>(),
             r.at("samples").get<std::vector<double>>()};
    for (double v : x.samples)
      if (!(v > 0)) throw std::runtime_error("am: " + x.name + " " + x.config + " measured " + std::to_string(v));
    rs.push_back(std::move(x));
  }
  return rs;
}

// Calls and transfers to every other node against the same done node by node, at every node count
// measured: a table each, and <backend>_<what>_vs_<reference>_<N>nodes (< 1: the group is faster).
void report_to_all(nlohmann::json& report, const std::string& backend, const std::vector<result>& rows, const std::string& group,
                   const std::string& in_turn, const std::string& ratio_name, const std::string& what) {
  std::printf("### %s: %s, %s against %s\n\n", backend.c_str(), what.c_str(), group.c_str(), in_turn.c_str());
  std::printf("| nodes | %s (µs) | %s (µs) | ratio |\n|---|---|---|---|\n", group.c_str(), in_turn.c_str());
  for (const result& all : rows) {
    if (all.name.rfind(group, 0) != 0) continue;
    for (const result& each : rows) {
      if (each.config != all.config || each.name.rfind(in_turn, 0) != 0) continue;
      const double ratio = all.median() / each.median();
      std::printf("| %u | %.1f | %.1f | %.2f |\n", all.threads, all.median() * 1e6, each.median() * 1e6, ratio);
      add_ratio(report, backend + "_" + ratio_name + "_" + std::to_string(all.threads) + "nodes", ratio,
                group + "'s time for " + what + ", over " + in_turn + ", " + std::to_string(all.threads) + " " + backend +
                    " nodes (< 1: " + group + " is faster)");
    }
  }
  std::printf("\n");
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

// Bytes per second of a transfer of `bytes` at its median time.
double bytes_per_s(std::uint64_t bytes, const result& r) { return static_cast<double>(bytes) / r.median(); }

// The raw transfer of `config` in the direction of `variant`: out of node 0 (0→1) for put, into it
// (1→0) for get.
const result* raw_for(const std::vector<result>& rs, const std::string& variant, const std::string& config) {
  const std::string direction = variant.find("get") != std::string::npos || variant.find("1→0") != std::string::npos ? "1→0" : "0→1";
  for (const result& r : rs)
    if (r.name.rfind("raw", 0) == 0 && r.config == config && r.name.find(direction) != std::string::npos) return &r;
  return nullptr;
}

// HAM's Figure 6: each transfer row as bandwidth (GiB/s at the median) against its size, and its
// bandwidth over the raw transfer's of the same size and direction (bw_vs_raw, > 1: faster than raw).
nlohmann::json bandwidth_table(const std::string& backend, const std::vector<result>& transfers) {
  nlohmann::json rows = nlohmann::json::array();
  for (const result& r : transfers) {
    const std::uint64_t bytes = transfer_bytes(r.config);
    const result* raw = raw_for(transfers, r.name, r.config);
    if (!bytes || !raw) continue;
    rows.push_back({{"backend", backend},
                    {"variant", r.name},
                    {"bytes", bytes},
                    {"gib_per_s", bytes_per_s(bytes, r) / double(1u << 30)},
                    {"bw_vs_raw", bytes_per_s(bytes, r) / bytes_per_s(bytes, *raw)}});
  }
  return rows;
}

void run(const options& opt, nlohmann::json& report) {
  std::printf("## am: an empty offload's round trip and put/get against the raw transport (2 nodes) %s\n\n", opt.scale_name());
  std::vector<result> all;
  nlohmann::json bandwidth = nlohmann::json::array();
  for (const std::string backend : {"shm", "tcp", "mpi"}) {
    std::vector<result> rs = run_backend(backend, opt);
    // Calls to all nodes: at 2 nodes from the run above, at 4 and 8 (oversubscribed) on their own.
    std::vector<result> to_all;
    for (auto it = rs.begin(); it != rs.end();)
      if (it->config.find("all others") != std::string::npos) {
        to_all.push_back(*it);
        it = rs.erase(it);
      } else {
        ++it;
      }
    for (int n : {4, 8})
      for (result& r : run_backend(backend, opt, n, /*only_all_nodes=*/true)) to_all.push_back(std::move(r));
    report_calls_to_all(report, backend, to_all);
    const std::string rtt = backend + " empty round trip";
    const result* raw = find_row(rs, "raw", rtt);
    const result* inl = find_row(rs, "heddle offload (short_task)", rtt);
    const result* exp = find_row(rs, "heddle offload (express)", rtt);
    if (!raw || !inl || !exp) throw std::runtime_error("am: " + backend + ": missing round-trip rows");
    // Two tables, each against its raw reference: the round trips, and the transfers.
    std::vector<result> trips, transfers;
    for (const result& r : rs) (r.config == rtt ? trips : transfers).push_back(r);
    const result* raw_transfer = transfers.empty() ? nullptr : raw_for(transfers, "heddle put", transfers.front().config);
    std::printf("### %s\n\n%s\n%s\n", backend.c_str(), markdown_table(trips, raw->name).c_str(),
                raw_transfer ? markdown_table(transfers, raw_transfer->name).c_str() : "");
    std::printf("round trip: raw %.0f ns (%s), offload %.0f ns short_task (+%.0f ns, %+.1f %%), %.0f ns express\n\n",
                raw->median() * 1e9, raw->name.c_str(), inl->median() * 1e9, (inl->median() - raw->median()) * 1e9,
                100 * (inl->median() / raw->median() - 1), exp->median() * 1e9);
    add_ratio(report, backend + "_offload_vs_raw", inl->median() / raw->median(),
              "an empty offload's round-trip time (short_task, HAM's inline mode) over the raw " + backend +
                  " round trip's (the faster raw way; < 1: faster than raw)");
    // What the offload adds to the transport's own round trip, in ns (issue targets: shm <= 60,
    // mpi <= 100, tcp <= 1000; HAM adds <= 40 over the same Open MPI).
    add_ratio(report, backend + "_offload_added_ns", (inl->median() - raw->median()) * 1e9,
              "an empty offload's median round trip (short_task) minus the raw " + backend +
                  " round trip's median, same run, in ns (targets: shm <= 60, mpi <= 100, tcp <= 1000)");
    add_ratio(report, backend + "_offload_express_vs_raw", exp->median() / raw->median(),
              "the same time with the default strategy (express: a worker runs the function)");
    const std::string mib = backend + " 1 MiB";
    const result* put = find_row(rs, "heddle put", mib);
    const result* get = find_row(rs, "heddle get", mib);
    const result* raw_out = put ? raw_for(rs, put->name, mib) : nullptr;
    const result* raw_in = get ? raw_for(rs, get->name, mib) : nullptr;
    if (raw_out && raw_in) {
      const std::uint64_t one_mib = std::uint64_t{1} << 20;
      add_ratio(report, backend + "_put_bw_1MiB_vs_raw", bytes_per_s(one_mib, *put) / bytes_per_s(one_mib, *raw_out),
                "put's bytes/s at 1 MiB over the raw " + backend + " transfer's in the same direction (" + raw_out->name +
                    "; > 1: faster than raw)");
      add_ratio(report, backend + "_get_bw_1MiB_vs_raw", bytes_per_s(one_mib, *get) / bytes_per_s(one_mib, *raw_in),
                "get's bytes/s at 1 MiB over the raw " + backend + " transfer's in the same direction (" + raw_in->name +
                    "; > 1: faster than raw)");
    }
    for (auto& row : bandwidth_table(backend, transfers)) bandwidth.push_back(std::move(row));
    all.insert(all.end(), rs.begin(), rs.end());
    all.insert(all.end(), to_all.begin(), to_all.end());
  }
  add_suite(report, "am", all, {{"unit", "s per operation"}, {"plot_rows", false}, {"tables", {{"bandwidth", bandwidth}}}});
}

const registration reg{{"am", 90, "active messages: offload round trip and put/get bandwidth vs raw shm, TCP and MPI", &run}};

}  // namespace

}  // namespace heddle::bench::am
