// heddle-bench-am-raw: the raw round trips heddle-bench am holds an empty offload's round trip
// against, in two processes of their own with no heddle in them (no runtime, no receiver threads
// polling beside the ping-pong): the best a hand-written program does on each transport. One run
// times one way, `round-trips` round trips, and writes
//   {"seconds_per_round_trip": S}
// to --json FILE (a warm-up of a tenth as many and at least 10 ms first). Every reply is checked to
// echo its ping.
//   shm-{pause,spin}-{one-line,lines-64-apart,lines-128-apart}: an 8-byte flag each way in memory
//     both processes map (this process and a child it forks); a look at the flag with a PAUSE
//     before the next, or none (spin); both flags in one 64-byte line, or each in a line of its own:
//     adjacent lines (64 bytes apart, the layout heddle-bench am measured before), or 128 bytes
//     apart (not in the same pair of lines either, which an adjacent-line prefetcher fetches
//     together).
//   tcp-{blocking,polled}: 8 bytes each way over a TCP_NODELAY loopback socket (this process and a
//     forked child), recv sleeping until data come, or polling (MSG_DONTWAIT) as heddle does.
//   mpi-blocking, mpi-posted (under mpirun -np 2): 8 bytes each way on MPI_COMM_WORLD, MPI_Send
//     and MPI_Recv; or MPI_Send into receives posted ahead (two, in a ring), completed by MPI_Test
//     in a loop, a completed receive posted again while the next is waited for (off the round
//     trip's path: heddle's own way of using MPI).
//   heddle-bench-am-raw --way WAY --json FILE [--round-trips N]
#include <mpi.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "sockets.hpp"

namespace {

using namespace heddle::bench::am;
using clock_type = std::chrono::steady_clock;
using u64 = std::uint64_t;

// The ping that ends the answering side (it is not answered).
constexpr u64 stop = ~u64{0};

// The pinging side's round trips, `one(i)` making the i-th (i from 1): n/10 + 1 of them and as many
// more as fill 10 ms untimed (as heddle-bench-am-node warms up), then n timed. Seconds per timed
// round trip.
template <class OneRoundTrip>
double timed_round_trips(u64 n, OneRoundTrip&& one) {
  u64 i = 1;
  const auto w0 = clock_type::now();
  for (; i <= n / 10 + 1 || clock_type::now() - w0 < std::chrono::milliseconds(10); ++i) one(i);
  const auto t0 = clock_type::now();
  for (const u64 end = i + n; i < end; ++i) one(i);
  return std::chrono::duration<double>(clock_type::now() - t0).count() / static_cast<double>(n);
}

// Waits for the forked child `pid`; throws unless it exited with status 0.
void reap(pid_t pid, const char* what) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string(what) + ": the answering process failed");
}

// ---- shm ----
// Looks at `flag` until it holds v (with a PAUSE after each look that does not find it, or none).
template <bool pause>
void wait_for(const std::atomic<u64>& flag, u64 v) {
  while (flag.load(std::memory_order_acquire) != v)
    if constexpr (pause) __builtin_ia32_pause();
}
// Looks at `flag` in the same way until it holds another value than `old`; returns that value.
template <bool pause>
u64 wait_for_change(const std::atomic<u64>& flag, u64 old) {
  u64 v;
  while ((v = flag.load(std::memory_order_acquire)) == old)
    if constexpr (pause) __builtin_ia32_pause();
  return v;
}

// The flags `gap` bytes apart, in a page both processes share.
template <bool pause>
double shm_round_trips(u64 n, std::size_t gap) {
  void* mem = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error("mmap failed");
  auto* ping = new (mem) std::atomic<u64>(0);
  auto* pong = new (static_cast<char*>(mem) + gap) std::atomic<u64>(0);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {  // answers every ping with its value
    for (u64 last = 0;;) {
      last = wait_for_change<pause>(*ping, last);
      if (last == stop) std::_Exit(0);
      pong->store(last, std::memory_order_release);
    }
  }
  const double s = timed_round_trips(n, [&](u64 i) {
    ping->store(i, std::memory_order_release);
    wait_for<pause>(*pong, i);  // only the child's answer to i moves pong to i
  });
  ping->store(stop, std::memory_order_release);
  reap(child, "shm");
  ::munmap(mem, 4096);
  return s;
}

// ---- tcp ----
double tcp_round_trips(u64 n, bool polled) {
  int port = 0;
  const int l = tcp_listener(port);
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {  // echoes every message
    try {
      ::close(l);
      const int fd = tcp_connect(port);
      for (;;) {
        u64 v = 0;
        full_read(fd, &v, sizeof v, polled);
        if (v == stop) break;
        full_write(fd, &v, sizeof v);
      }
      ::close(fd);
      std::_Exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heddle-bench-am-raw (child): %s\n", e.what());
      std::_Exit(1);
    }
  }
  const int fd = tcp_accept(l);
  const double s = timed_round_trips(n, [&](u64 i) {
    u64 v = 0;
    full_write(fd, &i, sizeof i);
    full_read(fd, &v, sizeof v, polled);
    if (v != i) throw std::runtime_error("tcp: a reply that is not its ping's echo");
  });
  full_write(fd, &stop, sizeof stop);
  ::close(fd);
  ::close(l);
  reap(child, "tcp");
  return s;
}

// ---- mpi ----
constexpr int tag = 4242;

// The receives from `peer` posted ahead, in a ring: MPI matches messages of one source and tag to
// posted receives in the order they were posted, so slot `next_` holds the next message.
class posted_receives {
 public:
  explicit posted_receives(int peer) : peer_(peer) {
    for (int k = 0; k < depth; ++k) post(k);
  }
  posted_receives(const posted_receives&) = delete;
  posted_receives& operator=(const posted_receives&) = delete;
  ~posted_receives() {
    for (MPI_Request& r : req_)
      if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
  }
  // The next message: MPI_Test until it is in; the receive completed before it is posted again
  // while this one is waited for (or, if this one was in at the first look, before returning).
  u64 next() {
    int done = 0;
    for (;;) {
      MPI_Test(&req_[next_], &done, MPI_STATUS_IGNORE);
      if (done) break;
      repost();
    }
    const u64 v = buf_[next_];
    repost();
    stale_ = next_;
    next_ = (next_ + 1) % depth;
    return v;
  }

 private:
  static constexpr int depth = 2;
  void post(int k) { MPI_Irecv(&buf_[k], 8, MPI_BYTE, peer_, tag, MPI_COMM_WORLD, &req_[k]); }
  void repost() {
    if (stale_ < 0) return;
    post(stale_);
    stale_ = -1;
  }
  int peer_;
  u64 buf_[depth] = {};
  MPI_Request req_[depth] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int next_ = 0, stale_ = -1;
};

// Rank 0 pings, rank 1 echoes; rank 0's seconds per round trip (0 on rank 1).
double mpi_round_trips(u64 n, bool posted) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) throw std::runtime_error("mpi: run it as 2 ranks (mpirun -np 2)");
  const int peer = 1 - rank;
  double s = 0;
  {
    std::unique_ptr<posted_receives> in = posted ? std::make_unique<posted_receives>(peer) : nullptr;
    auto receive = [&] {
      u64 v = 0;
      if (in) return in->next();
      MPI_Recv(&v, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return v;
    };
    MPI_Barrier(MPI_COMM_WORLD);  // both posted their receives
    if (rank == 0) {
      s = timed_round_trips(n, [&](u64 i) {
        MPI_Send(&i, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        if (receive() != i) throw std::runtime_error("mpi: a reply that is not its ping's echo");
      });
      MPI_Send(&stop, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    } else {
      for (u64 v; (v = receive()) != stop;) MPI_Send(&v, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"heddle-bench-am-raw: a raw round trip between two processes without heddle"};
  std::string way, json_file;
  u64 n = 20000;
  app.add_option("--way", way, "the transport and the way of using it")
      ->required()
      ->check(CLI::IsMember({"shm-pause-one-line", "shm-spin-one-line", "shm-pause-lines-64-apart", "shm-spin-lines-64-apart",
                             "shm-pause-lines-128-apart", "shm-spin-lines-128-apart", "tcp-blocking", "tcp-polled",
                             "mpi-blocking", "mpi-posted"}));
  app.add_option("--json", json_file, "where the result goes")->required();
  app.add_option("--round-trips", n, "round trips timed")->check(CLI::Range(u64{1}, u64{1'000'000'000}));
  CLI11_PARSE(app, argc, argv);
  const bool mpi = way.rfind("mpi", 0) == 0;
  int rank = 0;
  try {
    if (mpi) {
      MPI_Init(&argc, &argv);  // a single thread: no locks in MPI's calls
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    // The bytes from one flag to the other.
    const std::size_t gap = way.find("one-line") != std::string::npos ? sizeof(u64)
                            : way.find("-64-") != std::string::npos  ? 64
                                                                      : 128;
    const double s = way.rfind("shm-pause", 0) == 0 ? shm_round_trips<true>(n, gap)
                     : way.rfind("shm-spin", 0) == 0 ? shm_round_trips<false>(n, gap)
                     : !mpi                          ? tcp_round_trips(n, way == "tcp-polled")
                                                     : mpi_round_trips(n, way == "mpi-posted");
    if (rank == 0) {
      std::FILE* f = std::fopen(json_file.c_str(), "w");
      if (!f) throw std::runtime_error("cannot write " + json_file);
      std::fprintf(f, "{\"seconds_per_round_trip\": %.12g}\n", s);
      std::fclose(f);
    }
    if (mpi) MPI_Finalize();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench-am-raw: %s\n", e.what());
    if (mpi) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
