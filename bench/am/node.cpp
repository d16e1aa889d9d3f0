// heddle-bench-am-node: the nodes of the am suite (suite.cpp starts them with heddle-run or mpirun).
// Node 0 measures, interleaved round by round in a new order each round, put/get transfers from
// 1 KiB up against the raw transport between the same two processes (node 1 runs its side of each
// raw transfer as an offloaded task):
//   shm: memcpy into and out of memory node 1 made and both map;
//   tcp: streaming over a TCP_NODELAY loopback socket, an ack after each block;
//   mpi: MPI_Send/MPI_Recv on MPI_COMM_WORLD, an ack after each block.
// With any number of nodes, node 0 also times a call to every other node, offload::broadcast
// against a sync call to each in turn, and 64 KiB to and from every other node, scatter and gather
// against a put or get to each in turn (--only-all-nodes: those alone). Node 0 writes
//   {"backend", "results": [{"name", "config", "samples": [seconds per operation, one a round]}]}
// to --json FILE. With --round-trip STRATEGY it times only an empty offload's round trip with that
// strategy (a tenth of the timed calls and at least 10 ms to warm up, then the timed calls:
// --rtt-iterations, a twentieth of them with express) and writes {"seconds_per_round_trip": S}: one sample of a round in which
// heddle-bench am times the raw round trips in processes of their own (raw.cpp).
//   heddle-bench-am-node --backend NAME --json FILE [--reps N] [--rtt-iterations N] [--max-bytes B]
//                        [--only-all-nodes | --round-trip short_task|express]
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <heddle/am.hpp>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sockets.hpp"

namespace {

namespace off = heddle::offload;
using namespace heddle::bench::am;  // sockets.hpp
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

void empty() {}

// ---- shm: memory node 1 owns, mapped by both processes ----
void* map_shared(const std::string& name, std::size_t bytes, bool create) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) throw std::runtime_error("shm_open " + name + ": " + std::strerror(errno));
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) throw std::runtime_error("ftruncate");
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw std::runtime_error("mmap " + name);
  return p;
}

// ---- tcp: a socket between the two processes (sockets.hpp) ----
// Node 1: receives `transfers` blocks of `bytes` and acks each.
void tcp_sink(int port, std::uint64_t bytes, std::uint64_t transfers) {
  const int fd = tcp_connect(port);
  std::vector<char> buf(bytes);
  for (std::uint64_t i = 0; i < transfers; ++i) {
    full_read(fd, buf.data(), bytes);
    full_write(fd, "k", 1);
  }
  ::close(fd);
}
// Node 1: sends `transfers` blocks of `bytes`, each after node 0's ack of the one before.
void tcp_source(int port, std::uint64_t bytes, std::uint64_t transfers) {
  const int fd = tcp_connect(port);
  std::vector<char> buf(bytes, 'x');
  char ack;
  for (std::uint64_t i = 0; i < transfers; ++i) {
    full_write(fd, buf.data(), bytes);
    full_read(fd, &ack, 1);
  }
  ::close(fd);
}
// Into node 1 (put's direction).
double tcp_raw_transfer(std::uint64_t bytes, std::uint64_t k, const std::vector<char>& data) {
  int port = 0;
  const int l = tcp_listener(port);
  off::ping(1, heddle::f2f<&tcp_sink>(port, bytes, k + 1));
  const int fd = tcp_accept(l);
  char ack;
  full_write(fd, data.data(), bytes);  // warm the connection
  full_read(fd, &ack, 1);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < k; ++i) {
    full_write(fd, data.data(), bytes);
    full_read(fd, &ack, 1);
  }
  const double s = seconds_since(t0) / static_cast<double>(k);
  ::close(fd);
  ::close(l);
  return s;
}

// From node 1 into `into` (get's direction).
double tcp_raw_transfer_in(std::uint64_t bytes, std::uint64_t k, std::vector<char>& into) {
  int port = 0;
  const int l = tcp_listener(port);
  off::ping(1, heddle::f2f<&tcp_source>(port, bytes, k + 1));
  const int fd = tcp_accept(l);
  full_read(fd, into.data(), bytes);  // warm the connection
  full_write(fd, "k", 1);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < k; ++i) {
    full_read(fd, into.data(), bytes);
    full_write(fd, "k", 1);
  }
  const double s = seconds_since(t0) / static_cast<double>(k);
  ::close(fd);
  ::close(l);
  return s;
}

// ---- mpi: MPI_Send/MPI_Recv on MPI_COMM_WORLD ----
constexpr int raw_tag = 4242;
// Node 1: receives `transfers` blocks of `bytes` from node 0 and acks each.
void mpi_sink(std::uint64_t bytes, std::uint64_t transfers) {
  std::vector<char> buf(bytes);
  for (std::uint64_t i = 0; i < transfers; ++i) {
    MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(nullptr, 0, MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD);
  }
}
double mpi_raw_transfer(std::uint64_t bytes, std::uint64_t k, const std::vector<char>& data) {
  off::ping(1, heddle::f2f<&mpi_sink>(bytes, k + 1));
  MPI_Send(data.data(), static_cast<int>(bytes), MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD);
  MPI_Recv(nullptr, 0, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < k; ++i) {
    MPI_Send(data.data(), static_cast<int>(bytes), MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD);
    MPI_Recv(nullptr, 0, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return seconds_since(t0) / static_cast<double>(k);
}

// Node 1: sends `transfers` blocks of `bytes` to node 0, each after node 0's ack of the one before.
void mpi_source(std::uint64_t bytes, std::uint64_t transfers) {
  std::vector<char> buf(bytes, 'x');
  for (std::uint64_t i = 0; i < transfers; ++i) {
    MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD);
    MPI_Recv(nullptr, 0, MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}
// From node 1 into `into` (get's direction).
double mpi_raw_transfer_in(std::uint64_t bytes, std::uint64_t k, std::vector<char>& into) {
  off::ping(1, heddle::f2f<&mpi_source>(bytes, k + 1));
  MPI_Recv(into.data(), static_cast<int>(bytes), MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(nullptr, 0, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < k; ++i) {
    MPI_Recv(into.data(), static_cast<int>(bytes), MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(nullptr, 0, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD);
  }
  return seconds_since(t0) / static_cast<double>(k);
}

// ---- shm raw transfer: memcpy into memory node 1 owns (put's direction), and out of it (get's) ----
double shm_raw_transfer(void* to, const void* from, std::uint64_t bytes, std::uint64_t k) {
  std::memcpy(to, from, bytes);  // warm
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < k; ++i) std::memcpy(to, from, bytes);
  return seconds_since(t0) / static_cast<double>(k);
}
// Node 1: makes the segment the raw memcpy writes into.
void shm_make_target(std::string name, std::uint64_t bytes) {
  std::memset(map_shared(name, bytes, true), 0, bytes);  // touched: its pages exist, as a buffer's do once used
}

// Seconds per empty call to node 1 with `how`, waited for: `warm` calls untimed and as many more as
// fill 10 ms (a session just started: what node 1 still does then is in no timed call), then n timed.
double offload_rtt(std::uint64_t warm, std::uint64_t n, heddle::strategy how) {
  const auto w0 = clock_type::now();
  for (std::uint64_t i = 0; i < warm || clock_type::now() - w0 < std::chrono::milliseconds(10); ++i)
    off::sync(1, heddle::f2f<&empty>(), how);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 0; i < n; ++i) off::sync(1, heddle::f2f<&empty>(), how);
  return seconds_since(t0) / static_cast<double>(n);
}

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
      if (off::sync(k, heddle::f2f<&here>(), heddle::strategy::short_task) != k) throw std::runtime_error("a call answered from elsewhere");
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

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name, json_file, round_trip;
  int reps = 5;
  std::uint64_t rtt_n = 20000, max_bytes = std::uint64_t{64} << 20;
  try {
    off::session s(argc, argv);
    if (off::this_node() != 0) return s.serve();
    CLI::App app{"heddle-bench-am-node: node 0 of heddle-bench am"};
    app.add_option("--backend", backend_name)->required();
    app.add_option("--json", json_file)->required();
    app.add_option("--reps", reps);
    app.add_option("--rtt-iterations", rtt_n)->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
    app.add_option("--max-bytes", max_bytes);
    bool only_all_nodes = false;
    auto* all_flag = app.add_flag("--only-all-nodes", only_all_nodes, "measure the calls and transfers to all nodes only");
    app.add_option("--round-trip", round_trip, "time only an empty offload's round trip with this strategy")
        ->check(CLI::IsMember({"short_task", "express"}))
        ->excludes(all_flag);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);  // --help, or what is wrong with the command line
    }
    if (!round_trip.empty()) {
      // express hands the call to a worker, tens of times slower: a twentieth of the calls.
      const bool express = round_trip == "express";
      const std::uint64_t n = express ? rtt_n / 20 + 1 : rtt_n;
      const double sec = offload_rtt(n / 10 + 1, n, express ? heddle::strategy::express : heddle::strategy::short_task);
      std::ofstream(json_file) << nlohmann::json{{"seconds_per_round_trip", sec}}.dump() << "\n";
      return 0;
    }
    if (only_all_nodes) max_bytes = 1024;  // no two-node transfers are measured

    std::vector<series> out;
    auto add = [&](const std::string& name, const std::string& config, double v) {
      for (series& x : out)
        if (x.name == name && x.config == config) return x.samples.push_back(v);
      out.push_back({name, config, {v}});
    };
    std::mt19937_64 rng(20261207);
    // Raw transfers both ways: into node 1's memory (put's direction) and out of it (get's).
    const std::string raw_bw_name = backend_name == "shm" ? "raw memcpy" : backend_name == "tcp" ? "raw TCP socket" : "raw MPI_Send";
    const std::string raw_out_name = raw_bw_name + " 0→1", raw_in_name = raw_bw_name + " 1→0";
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
    // Transfers: 1 KiB to max_bytes by 4×.
    std::vector<char> data(max_bytes), back(max_bytes);
    for (std::uint64_t i = 0; i < max_bytes; ++i) data[i] = static_cast<char>(i * 31 + 7);
    off::buffer_ptr<char> b = off::allocate<char>(1, max_bytes);
    off::put(data.data(), b, max_bytes).get();  // what every get below must read back, whichever runs first
    std::string shm_target;
    char* remote = nullptr;
    if (backend_name == "shm") {
      shm_target = "/heddle-bench-am-target." + std::to_string(::getpid());
      off::sync(1, heddle::f2f<&shm_make_target>(shm_target, max_bytes));
      remote = static_cast<char*>(map_shared(shm_target, max_bytes, false));
    }
    for (std::uint64_t bytes = 1024; bytes <= max_bytes && !only_all_nodes; bytes *= 4) {
      const std::uint64_t k = std::max<std::uint64_t>(1, std::min<std::uint64_t>(200, (std::uint64_t{64} << 20) / bytes));
      const std::string config = bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
      auto raw_out = [&] {
        return backend_name == "shm"   ? shm_raw_transfer(remote, data.data(), bytes, k)
               : backend_name == "tcp" ? tcp_raw_transfer(bytes, k, data)
                                       : mpi_raw_transfer(bytes, k, data);
      };
      auto raw_in = [&] {
        return backend_name == "shm"   ? shm_raw_transfer(back.data(), remote, bytes, k)
               : backend_name == "tcp" ? tcp_raw_transfer_in(bytes, k, back)
                                       : mpi_raw_transfer_in(bytes, k, back);
      };
      auto put = [&] {
        off::put(data.data(), b, bytes).get();  // warm
        const auto t0 = clock_type::now();
        for (std::uint64_t i = 0; i < k; ++i) off::put(data.data(), b, bytes).get();
        return seconds_since(t0) / static_cast<double>(k);
      };
      auto get = [&] {
        off::get(b, back.data(), bytes).get();  // warm
        std::memset(back.data(), 0, bytes);     // the timed gets' bytes are checked, not what was there
        const auto t0 = clock_type::now();
        for (std::uint64_t i = 0; i < k; ++i) off::get(b, back.data(), bytes).get();
        const double sec = seconds_since(t0) / static_cast<double>(k);
        if (std::memcmp(back.data(), data.data(), bytes) != 0)
          throw std::runtime_error("get returned other bytes than put wrote (" + config + ")");
        return sec;
      };
      in_rounds(rng, reps, config, {{raw_out_name, raw_out}, {raw_in_name, raw_in}, {"heddle put", put}, {"heddle get", get}}, add);
    }
    off::free(b);
    if (remote) {
      ::munmap(remote, max_bytes);
      ::shm_unlink(shm_target.c_str());
    }
    nlohmann::json j{{"backend", backend_name}, {"results", nlohmann::json::array()}};
    for (const series& x : out) j["results"].push_back({{"name", x.name}, {"config", x.config}, {"samples", x.samples}});
    std::ofstream(json_file) << j.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench-am-node: %s\n", e.what());
    return 1;
  }
}
