// heddle-bench-am-node: the two nodes of the am suite (suite.cpp starts them with heddle-run or
// mpirun). Node 0 measures, in the same run and interleaved round by round, an empty offload's
// round trip and put/get transfers against the raw transport between the same two processes:
//   shm: a flag ping-pong through shared memory, and memcpy into the other process's memory;
//   tcp: 8-byte messages over a TCP_NODELAY socket, and streaming into it;
//   mpi: MPI_Send/MPI_Recv on MPI_COMM_WORLD.
// Node 1 runs its side of every raw measurement as an offloaded task. With any number of nodes, node
// 0 also times a call to every other node, offload::broadcast against a sync call to each in turn,
// and 64 KiB to and from every other node, scatter and gather against a put or get to each in turn
// (--only-all-nodes: those alone). Node 0 writes
//   {"backend", "results": [{"name", "config", "samples": [seconds per operation, ...]}]}
// to --json FILE.
//   heddle-bench-am-node --backend NAME --json FILE [--reps N] [--rtt-iterations N] [--max-bytes B] [--only-all-nodes]
#include <arpa/inet.h>
#include <fcntl.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <heddle/am.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace off = heddle::offload;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

void empty() {}

// ---- shm: a flag ping-pong and a memcpy between the processes ----
struct alignas(64) flag_line {
  std::atomic<std::uint64_t> v{0};
};
struct flags {
  flag_line ping, pong;
};
void* map_shared(const std::string& name, std::size_t bytes, bool create) {
  const int fd = ::shm_open(name.c_str(), O_RDWR | (create ? O_CREAT | O_EXCL : 0), 0600);
  if (fd < 0) throw std::runtime_error("shm_open " + name + ": " + std::strerror(errno));
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) throw std::runtime_error("ftruncate");
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw std::runtime_error("mmap " + name);
  return p;
}
// Node 1: answers n pings (after the handshake value 1).
void shm_pong(std::string name, std::uint64_t n) {
  auto* f = static_cast<flags*>(map_shared(name, sizeof(flags), false));
  for (std::uint64_t i = 1; i <= n + 1; ++i) {
    while (f->ping.v.load(std::memory_order_acquire) != i) __builtin_ia32_pause();
    f->pong.v.store(i, std::memory_order_release);
  }
  ::munmap(f, sizeof(flags));
}
double shm_raw_rtt(std::uint64_t n) {
  static int round = 0;
  const std::string name = "/heddle-bench-am." + std::to_string(::getpid()) + "." + std::to_string(round++);
  auto* f = static_cast<flags*>(map_shared(name, sizeof(flags), true));
  off::ping(1, heddle::f2f<&shm_pong>(name, n));
  f->ping.v.store(1, std::memory_order_release);  // handshake: node 1's task is running
  while (f->pong.v.load(std::memory_order_acquire) != 1) __builtin_ia32_pause();
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 2; i <= n + 1; ++i) {
    f->ping.v.store(i, std::memory_order_release);
    while (f->pong.v.load(std::memory_order_acquire) != i) __builtin_ia32_pause();
  }
  const double s = seconds_since(t0) / static_cast<double>(n);
  ::munmap(f, sizeof(flags));
  ::shm_unlink(name.c_str());
  return s;
}

// ---- tcp: a socket between the two processes ----
int tcp_listener(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 4) != 0)
    throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  port = ntohs(sa.sin_port);
  return fd;
}
int tcp_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) throw std::runtime_error("connect");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}
void full_write(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w <= 0) throw std::runtime_error("send");
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}
// `busy`: polls the socket (MSG_DONTWAIT) instead of sleeping in recv, as heddle's polling does.
void full_read(int fd, void* p, std::size_t n, bool busy = false) {
  char* c = static_cast<char*>(p);
  while (n) {
    const ssize_t r = ::recv(fd, c, n, busy ? MSG_DONTWAIT : 0);
    if (r < 0 && busy && errno == EAGAIN) continue;
    if (r <= 0) throw std::runtime_error("recv");
    c += r;
    n -= static_cast<std::size_t>(r);
  }
}
// Node 1: echoes n 8-byte messages, then receives `transfers` blocks of `bytes` and acks each.
void tcp_peer(int port, std::uint64_t n, std::uint64_t bytes, std::uint64_t transfers, bool busy) {
  const int fd = tcp_connect(port);
  std::uint64_t v = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    full_read(fd, &v, sizeof v, busy);
    full_write(fd, &v, sizeof v);
  }
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
int tcp_accept(int listener) {
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}
double tcp_raw_rtt(std::uint64_t n, bool busy) {
  int port = 0;
  const int l = tcp_listener(port);
  off::ping(1, heddle::f2f<&tcp_peer>(port, n, std::uint64_t{0}, std::uint64_t{0}, busy));
  const int fd = tcp_accept(l);
  std::uint64_t v = 0;
  full_write(fd, &v, sizeof v);  // the first round trip starts the peer
  full_read(fd, &v, sizeof v, busy);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 1; i < n; ++i) {
    full_write(fd, &i, sizeof i);
    full_read(fd, &v, sizeof v, busy);
  }
  const double s = seconds_since(t0) / static_cast<double>(n - 1);
  ::close(fd);
  ::close(l);
  return s;
}
double tcp_raw_transfer(std::uint64_t bytes, std::uint64_t k, const std::vector<char>& data) {
  int port = 0;
  const int l = tcp_listener(port);
  off::ping(1, heddle::f2f<&tcp_peer>(port, std::uint64_t{0}, bytes, k + 1, false));
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
void mpi_peer(std::uint64_t n, std::uint64_t bytes, std::uint64_t transfers) {
  std::uint64_t v = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    MPI_Recv(&v, 8, MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 8, MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD);
  }
  std::vector<char> buf(bytes);
  for (std::uint64_t i = 0; i < transfers; ++i) {
    MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(nullptr, 0, MPI_BYTE, 0, raw_tag, MPI_COMM_WORLD);
  }
}
double mpi_raw_rtt(std::uint64_t n) {
  off::ping(1, heddle::f2f<&mpi_peer>(n, std::uint64_t{0}, std::uint64_t{0}));
  std::uint64_t v = 0;
  MPI_Send(&v, 8, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD);
  MPI_Recv(&v, 8, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const auto t0 = clock_type::now();
  for (std::uint64_t i = 1; i < n; ++i) {
    MPI_Send(&i, 8, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD);
    MPI_Recv(&v, 8, MPI_BYTE, 1, raw_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return seconds_since(t0) / static_cast<double>(n - 1);
}
double mpi_raw_transfer(std::uint64_t bytes, std::uint64_t k, const std::vector<char>& data) {
  off::ping(1, heddle::f2f<&mpi_peer>(std::uint64_t{0}, bytes, k + 1));
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

double offload_rtt(std::uint64_t n, heddle::strategy how) {
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

}  // namespace

int main(int argc, char** argv) {
  std::string backend_name, json_file;
  int reps = 5;
  std::uint64_t rtt_n = 20000, max_bytes = std::uint64_t{64} << 20;
  try {
    off::session s(argc, argv);
    if (off::this_node() != 0) return s.serve();
    CLI::App app{"heddle-bench-am-node: node 0 of heddle-bench am"};
    app.add_option("--backend", backend_name)->required();
    app.add_option("--json", json_file)->required();
    app.add_option("--reps", reps);
    app.add_option("--rtt-iterations", rtt_n);
    app.add_option("--max-bytes", max_bytes);
    bool only_all_nodes = false;
    app.add_flag("--only-all-nodes", only_all_nodes, "measure the calls and transfers to all nodes only");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);  // --help, or what is wrong with the command line
    }
    if (only_all_nodes) max_bytes = 1024;  // no two-node transfers are measured

    std::vector<series> out;
    auto add = [&](const std::string& name, const std::string& config, double v) {
      for (series& x : out)
        if (x.name == name && x.config == config) return x.samples.push_back(v);
      out.push_back({name, config, {v}});
    };
    const std::string raw_rtt_name = backend_name == "shm" ? "raw shared-memory flag"
                                     : backend_name == "tcp" ? "raw TCP socket, blocking recv"
                                                             : "raw MPI_Send/MPI_Recv";
    // Raw transfers both ways: into node 1's memory (put's direction) and out of it (get's).
    const std::string raw_bw_name = backend_name == "shm" ? "raw memcpy" : backend_name == "tcp" ? "raw TCP socket" : "raw MPI_Send";
    const std::string raw_out_name = raw_bw_name + " 0→1", raw_in_name = raw_bw_name + " 1→0";
    // Calls to every other node: broadcast against sequential calls, interleaved round by round.
    const std::string all_config = std::to_string(off::num_nodes()) + " nodes, a call to all others";
    for (int r = 0; r < reps + 1; ++r) {
      const double tree = broadcast_time(rtt_n / 10 + 1);
      const double each = sequential_time(rtt_n / 10 + 1);
      if (r == 0) continue;
      add("heddle broadcast (short_task)", all_config, tree);
      add("sync to each node in turn (short_task)", all_config, each);
    }
    {
      blocks b;
      const std::string blocks_config = std::to_string(off::num_nodes()) + " nodes, 64 KiB to or from all others";
      const std::uint64_t rounds = rtt_n / 100 + 1;
      for (int r = 0; r < reps + 1; ++r) {
        const double scatter = b.scatter(rounds), puts = b.puts(rounds), gather = b.gather(rounds), gets = b.gets(rounds);
        if (r == 0) continue;
        add("heddle scatter", blocks_config, scatter);
        add("put to each node in turn", blocks_config, puts);
        add("heddle gather", blocks_config, gather);
        add("get from each node in turn", blocks_config, gets);
      }
    }
    // Round trips: raw, then offloads started inline (short_task) and on the express lane, every round.
    for (int r = 0; r < reps + 1 && !only_all_nodes; ++r) {  // round 0 warms up
      const double raw = backend_name == "shm" ? shm_raw_rtt(rtt_n) : backend_name == "tcp" ? tcp_raw_rtt(rtt_n, false) : mpi_raw_rtt(rtt_n);
      // TCP both ways: sleeping in recv (the usual raw socket) and polling it, as heddle does.
      const double raw_polled = backend_name == "tcp" ? tcp_raw_rtt(rtt_n, true) : 0;
      const double inl = offload_rtt(rtt_n, heddle::strategy::short_task);
      const double exp = offload_rtt(rtt_n / 20 + 1, heddle::strategy::express);
      if (r == 0) continue;
      add(raw_rtt_name, "empty round trip", raw);
      if (backend_name == "tcp") add("raw TCP socket, polled recv", "empty round trip", raw_polled);
      add("heddle offload (short_task)", "empty round trip", inl);
      add("heddle offload (express)", "empty round trip", exp);
    }
    // Transfers: 1 KiB to max_bytes by 4×.
    std::vector<char> data(max_bytes), back(max_bytes);
    for (std::uint64_t i = 0; i < max_bytes; ++i) data[i] = static_cast<char>(i * 31 + 7);
    off::buffer_ptr<char> b = off::allocate<char>(1, max_bytes);
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
      for (int r = 0; r < reps + 1; ++r) {
        const double raw = backend_name == "shm" ? shm_raw_transfer(remote, data.data(), bytes, k)
                           : backend_name == "tcp" ? tcp_raw_transfer(bytes, k, data)
                                                   : mpi_raw_transfer(bytes, k, data);
        const double raw_in = backend_name == "shm" ? shm_raw_transfer(back.data(), remote, bytes, k)
                              : backend_name == "tcp" ? tcp_raw_transfer_in(bytes, k, back)
                                                      : mpi_raw_transfer_in(bytes, k, back);
        off::put(data.data(), b, bytes).get();
        auto t0 = clock_type::now();
        for (std::uint64_t i = 0; i < k; ++i) off::put(data.data(), b, bytes).get();
        const double put = seconds_since(t0) / static_cast<double>(k);
        t0 = clock_type::now();
        for (std::uint64_t i = 0; i < k; ++i) off::get(b, back.data(), bytes).get();
        const double get = seconds_since(t0) / static_cast<double>(k);
        if (std::memcmp(back.data(), data.data(), bytes) != 0)
          throw std::runtime_error("get returned other bytes than put wrote (" + config + ")");
        if (r == 0) continue;
        add(raw_out_name, config, raw);
        add(raw_in_name, config, raw_in);
        add("heddle put", config, put);
        add("heddle get", config, get);
      }
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
