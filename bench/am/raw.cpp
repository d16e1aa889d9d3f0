// SPDX-License-Identifier: Apache-2.0
// heddle-bench-am-raw: the raw round trips and transfers heddle-bench am holds an empty offload's
// round trip and put/get against, in two processes of their own with no heddle in them (no runtime,
// no receiver threads polling beside them): the best a hand-written program does on each transport.
// One run measures one way.
//
// Round trips: `round-trips` of them, timed, written as
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
//
// Transfers (the raw side of heddle-bench-am-node --transfers, the same sizes, counts and order):
// from 1 KiB to --max-bytes by 4x, each size both ways, out of this process (0→1, put's direction)
// and into it (1→0, get's), each a block and a 0- or 1-byte answer the other way: out, the block
// and the receiver's ack; in, a request and the block. First one transfer of every size each way
// (pages touched, socket buffers grown), then every (size, direction) in an order shuffled with
// --seed: one untimed transfer, then min(200, 64 MiB / size) timed. Written to --json FILE as
//   {"results": [{"name": "<way's name> 0→1" or "... 1→0", "config": "1 MiB", "seconds": S}]}
// (seconds per transfer). Every block carries its number in its first and last 8 bytes, checked by
// its receiver on each transfer; after each timed run, the last block the receiver got is compared
// whole with what was sent.
//   shm-transfer: memcpy into and out of memory both processes map (a forked child), nothing more
//     (as heddle's shm put and get, one memcpy on the caller's thread): out, a copy into the
//     child's memory, which the child checks after the timed run; in, a copy out of its memory of
//     the block it stamped before the run (the one stamp of all the run's blocks).
//   shm-transfer-handshake: the same with a flag each way for each block: out, the copy, then a
//     flag the child answers when it has checked the block's stamps; in, a flag the child answers
//     when it has stamped the block, then the copy.
//   tcp-transfer, tcp-transfer-polled: send/recv of the block over a TCP_NODELAY loopback socket
//     (a forked child), recv sleeping until data come, or polling (MSG_DONTWAIT) on both sides, as
//     heddle does.
//   mpi-transfer-blocking, mpi-transfer-posted (under mpirun -np 2): MPI_Send/MPI_Recv of the
//     whole block on MPI_COMM_WORLD; or every receive posted (MPI_Irecv) before the message it
//     takes can be sent, the sender's MPI_Isend and its receive of the answer waited for together.
//   heddle-bench-am-raw --way WAY --json FILE [--round-trips N] [--max-bytes B] [--seed S]
#include <mpi.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// ---- transfers ----
// What the measuring side (this process, or rank 0) asks of the other, for a run of transfers or
// for a check.
enum op : u64 { op_out = 1, op_in, op_check, op_stop };

// A block's bytes: byte j is j * 31 + 7, but for its number (the stamp) in its first and last 8
// bytes. Sizes are at least 1 KiB, so the two stamps never overlap.
void fill_pattern(char* p, u64 bytes) {
  for (u64 j = 0; j < bytes; ++j) p[j] = static_cast<char>(j * 31 + 7);
}
bool stamped(const char* p, u64 bytes, u64 s) {
  u64 a = 0, b = 0;
  std::memcpy(&a, p, 8);
  std::memcpy(&b, p + bytes - 8, 8);
  return a == s && b == s;
}
// The whole block as sent: stamped with s, the pattern in between (`pattern` holds it).
bool intact(const char* p, const char* pattern, u64 bytes, u64 s) {
  return stamped(p, bytes, s) && std::memcmp(p + 8, pattern + 8, bytes - 16) == 0;
}

// A sender's buffer of the pattern, stamped for each block it sends; a stamp of another size is
// undone first, so that every block is the pattern but for its own two stamps.
class stamped_source {
 public:
  explicit stamped_source(char* p, u64 max_bytes) : p_(p) { fill_pattern(p, max_bytes); }
  const char* stamp(u64 bytes, u64 s) {
    if (last_ && last_ != bytes) {
      fill_pattern(p_, 8);
      for (u64 j = last_ - 8; j < last_; ++j) p_[j] = static_cast<char>(j * 31 + 7);
    }
    last_ = bytes;
    std::memcpy(p_, &s, 8);
    std::memcpy(p_ + bytes - 8, &s, 8);
    return p_;
  }

 private:
  char* p_;
  u64 last_ = 0;
};

// The transfers' sizes: 1 KiB to max_bytes by 4x (heddle-bench-am-node's).
std::vector<u64> transfer_sizes(u64 max_bytes) {
  std::vector<u64> v;
  for (u64 b = 1024; b <= max_bytes; b *= 4) v.push_back(b);
  return v;
}
std::string size_name(u64 bytes) {
  return bytes >= (u64{1} << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

// The measuring side's runs (the header's contract), over `link`, which moves one block a call:
//   begin(op, bytes, count): count transfers of `bytes` in direction op follow;
//   out(p, bytes, s): the block p (stamped s) to the other side, returning at its ack;
//   in(p, bytes, s): the block stamped s from the other side into p, returning the stamp it must
//     carry (s, or the one the other side stamped at begin where it cannot stamp every block);
//   other_intact(bytes, s): whether the other side's last block received is whole (stamped s);
//   stop(): the other side ends.
// Throws std::runtime_error when a block arrives other than sent. The results as the header says.
template <class Link>
nlohmann::json timed_transfers(Link& link, u64 max_bytes, u64 seed, const std::string& name) {
  std::vector<char> src_mem(max_bytes), back(max_bytes), pattern(max_bytes);
  fill_pattern(pattern.data(), max_bytes);
  stamped_source src(src_mem.data(), max_bytes);
  const std::vector<u64> sizes = transfer_sizes(max_bytes);
  for (u64 bytes : sizes) {  // the warm-up: one of each
    link.begin(op_out, bytes, 1);
    link.out(src.stamp(bytes, 1), bytes, 1);
    link.begin(op_in, bytes, 1);
    (void)link.in(back.data(), bytes, 1);
  }
  std::vector<std::pair<u64, bool>> steps;  // (bytes, out)
  for (u64 bytes : sizes)
    for (bool out : {true, false}) steps.emplace_back(bytes, out);
  std::mt19937_64 rng(seed);
  for (std::size_t i = steps.size(); i > 1; --i) std::swap(steps[i - 1], steps[rng() % i]);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [bytes, out] : steps) {
    const u64 k = std::max<u64>(1, std::min<u64>(200, (u64{64} << 20) / bytes));
    link.begin(out ? op_out : op_in, bytes, k + 1);
    clock_type::time_point t0;
    u64 last = k + 1;  // the last block's stamp
    if (out) {
      link.out(src.stamp(bytes, 1), bytes, 1);  // untimed
      t0 = clock_type::now();
      for (u64 s = 2; s <= k + 1; ++s) link.out(src.stamp(bytes, s), bytes, s);
    } else {
      (void)link.in(back.data(), bytes, 1);  // untimed
      std::memset(back.data(), 0, bytes);
      t0 = clock_type::now();
      for (u64 s = 2; s <= k + 1; ++s)
        if (!stamped(back.data(), bytes, last = link.in(back.data(), bytes, s)))
          throw std::runtime_error(name + ": a block in that is not the one sent");
    }
    const double sec = std::chrono::duration<double>(clock_type::now() - t0).count() / static_cast<double>(k);
    if (out ? !link.other_intact(bytes, last) : !intact(back.data(), pattern.data(), bytes, last))
      throw std::runtime_error(name + ": " + size_name(bytes) + (out ? " out" : " in") + " arrived other than sent");
    results.push_back({{"name", name + (out ? " 0→1" : " 1→0")}, {"config", size_name(bytes)}, {"seconds", sec}});
  }
  link.stop();
  return results;
}

// shm: the control lines and, after them, a region for each direction, in memory both processes
// map: out (0→1) the child's memory this process copies into, in (1→0) the child's block this
// process copies out of. `handshake`: a command (a flag each way) for every block, else only for
// begin (op_in: the child stamps its block), the check and the end.
struct shm_control {
  alignas(128) std::atomic<u64> seq{0};  // this process → the child: command `seq` is in op..stamp
  u64 op = 0, bytes = 0, stamp = 0;      // published by seq's release
  alignas(128) std::atomic<u64> ack{0};  // the child → this process: command `ack` done
  u64 failed = 0;                        // a block the child found other than sent (published by ack)
};
constexpr std::size_t shm_control_bytes = 4096;

class shm_link {
 public:
  shm_link(u64 max_bytes, bool handshake)
      : max_(max_bytes), size_(shm_control_bytes + 2 * max_bytes), handshake_(handshake) {
    void* m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
    mem_ = static_cast<char*>(m);
    ctl_ = new (mem_) shm_control;
    std::memset(mem_ + shm_control_bytes, 0, 2 * max_bytes);  // touched: its pages exist, as a used buffer's do
    child_ = ::fork();
    if (child_ < 0) throw std::runtime_error("fork failed");
    if (child_ == 0) serve();
  }
  shm_link(const shm_link&) = delete;
  shm_link& operator=(const shm_link&) = delete;
  ~shm_link() { ::munmap(mem_, size_); }

  void begin(u64 o, u64 bytes, u64 count) {
    if (!handshake_ && o == op_in) command(op_in, bytes, begin_stamp_ = count);
  }
  void out(const char* p, u64 bytes, u64 s) {
    std::memcpy(out_region(), p, bytes);
    if (handshake_) command(op_out, bytes, s);
  }
  u64 in(char* p, u64 bytes, u64 s) {
    if (handshake_) command(op_in, bytes, s);
    std::memcpy(p, in_region(), bytes);
    return handshake_ ? s : begin_stamp_;
  }
  bool other_intact(u64 bytes, u64 s) {
    command(op_check, bytes, s);
    return ctl_->failed == 0;
  }
  void stop() {
    ctl_->op = op_stop;
    ctl_->seq.store(++n_, std::memory_order_release);
    reap(child_, "shm");
  }

 private:
  char* out_region() const { return mem_ + shm_control_bytes; }
  char* in_region() const { return mem_ + shm_control_bytes + max_; }
  // Command n_+1, waited for (spinning: the raw round trips found a spin no slower than a pause).
  void command(u64 o, u64 bytes, u64 s) {
    ctl_->op = o;
    ctl_->bytes = bytes;
    ctl_->stamp = s;
    ctl_->seq.store(++n_, std::memory_order_release);
    wait_for<false>(ctl_->ack, n_);
  }
  // The child: answers every command until op_stop.
  [[noreturn]] void serve() {
    std::vector<char> pattern(max_);
    fill_pattern(pattern.data(), max_);
    stamped_source src(in_region(), max_);
    for (u64 last = 0;;) {
      last = wait_for_change<false>(ctl_->seq, last);
      const u64 o = ctl_->op, bytes = ctl_->bytes, s = ctl_->stamp;
      if (o == op_stop) std::_Exit(0);
      if (o == op_out && !stamped(out_region(), bytes, s)) ctl_->failed = 1;
      if (o == op_check && !intact(out_region(), pattern.data(), bytes, s)) ctl_->failed = 1;
      if (o == op_in) src.stamp(bytes, s);
      ctl_->ack.store(last, std::memory_order_release);
    }
  }
  u64 max_;
  std::size_t size_;
  char* mem_ = nullptr;
  shm_control* ctl_ = nullptr;
  bool handshake_;
  pid_t child_ = -1;
  u64 n_ = 0, begin_stamp_ = 0;
};

// The other side of a tcp or mpi link: `recv_header` the next {op, bytes, count or stamp};
// `recv_block`/`send_block`, `recv_byte`/`send_byte` one message each. Answers until op_stop.
template <class Io>
void serve_transfers(Io& io, u64 max_bytes) {
  std::vector<char> buf(max_bytes), src_mem(max_bytes), pattern(max_bytes);
  fill_pattern(pattern.data(), max_bytes);
  stamped_source src(src_mem.data(), max_bytes);
  bool ok = true;
  for (;;) {
    u64 h[3];
    io.recv_header(h);
    const u64 o = h[0], bytes = h[1];
    if (o == op_stop) return;
    if (o == op_check) {
      io.send_byte(ok && intact(buf.data(), pattern.data(), bytes, h[2]) ? 'y' : 'n');
      ok = true;
    } else if (o == op_out) {
      io.begin_receiving(buf.data(), bytes, h[2]);
      for (u64 s = 1; s <= h[2]; ++s) {
        io.recv_block(buf.data(), bytes, s == h[2]);
        ok = ok && stamped(buf.data(), bytes, s);
        io.send_byte('k');
      }
    } else {
      io.begin_requests(h[2]);
      for (u64 s = 1; s <= h[2]; ++s) {
        io.recv_byte(s == h[2]);
        io.send_block(src.stamp(bytes, s), bytes);
      }
    }
  }
}

// tcp: both sides' messages over one socket, recv sleeping until data come or, `polled`, polling.
struct tcp_io {
  int fd;
  bool polled;
  void recv_header(u64* h) { full_read(fd, h, 3 * sizeof(u64), polled); }
  void send_header(u64 o, u64 bytes, u64 n) {
    const u64 h[3] = {o, bytes, n};
    full_write(fd, h, sizeof h);
  }
  void begin_receiving(char*, u64, u64) {}
  void begin_requests(u64) {}
  void recv_block(char* p, u64 bytes, bool) { full_read(fd, p, bytes, polled); }
  void send_block(const char* p, u64 bytes) { full_write(fd, p, bytes); }
  char recv_byte(bool) {
    char c = 0;
    full_read(fd, &c, 1, polled);
    return c;
  }
  void send_byte(char c) { full_write(fd, &c, 1); }
};

class tcp_link {
 public:
  tcp_link(u64 max_bytes, bool polled) : io_{-1, polled} {
    int port = 0;
    listener_ = tcp_listener(port);
    child_ = ::fork();
    if (child_ < 0) throw std::runtime_error("fork failed");
    if (child_ == 0) {
      try {
        ::close(listener_);
        tcp_io io{tcp_connect(port), polled};
        serve_transfers(io, max_bytes);
        ::close(io.fd);
        std::_Exit(0);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "heddle-bench-am-raw (child): %s\n", e.what());
        std::_Exit(1);
      }
    }
    io_.fd = tcp_accept(listener_);
  }
  tcp_link(const tcp_link&) = delete;
  tcp_link& operator=(const tcp_link&) = delete;
  ~tcp_link() {
    ::close(io_.fd);
    ::close(listener_);
  }
  void begin(u64 o, u64 bytes, u64 count) { io_.send_header(o, bytes, count); }
  void out(const char* p, u64 bytes, u64) {
    io_.send_block(p, bytes);
    io_.recv_byte(false);
  }
  u64 in(char* p, u64 bytes, u64 s) {
    io_.send_byte('r');
    io_.recv_block(p, bytes, false);
    return s;
  }
  bool other_intact(u64 bytes, u64 s) {
    io_.send_header(op_check, bytes, s);
    return io_.recv_byte(false) == 'y';
  }
  void stop() {
    io_.send_header(op_stop, 0, 0);
    reap(child_, "tcp");
  }

 private:
  int listener_ = -1;
  pid_t child_ = -1;
  tcp_io io_;
};

// mpi: rank 0 measures, rank 1 answers; the headers on a tag of their own. `posted`: every receive
// is an MPI_Irecv posted before its message can be sent (the next block's or request's while the
// one before is answered), and a block's MPI_Isend is waited for with the receive of its ack.
constexpr int header_tag = 4243;
struct mpi_io {
  int peer;
  bool posted;
  MPI_Request next = MPI_REQUEST_NULL;  // the receive posted ahead
  char* into = nullptr;                 // its buffer
  u64 bytes = 0;
  char byte = 0;

  void recv_header(u64* h) { MPI_Recv(h, 3, MPI_UINT64_T, peer, header_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
  void send_header(u64 o, u64 b, u64 n) {
    const u64 h[3] = {o, b, n};
    MPI_Send(h, 3, MPI_UINT64_T, peer, header_tag, MPI_COMM_WORLD);
  }
  void post() { MPI_Irecv(into, static_cast<int>(bytes), MPI_BYTE, peer, tag, MPI_COMM_WORLD, &next); }
  // The other side: the first of `count` blocks, or requests, posted for.
  void begin_receiving(char* p, u64 b, u64) {
    into = p;
    bytes = b;
    if (posted) post();
  }
  void begin_requests(u64) {
    into = &byte;
    bytes = 1;
    if (posted) post();
  }
  // A block into p; with posted, the receive posted ahead completed, and the next posted unless
  // `last` (before the ack that lets it be sent: the block just in is checked before the ack, and
  // nothing arrives into p until then).
  void recv_block(char* p, u64 b, bool last) {
    if (!posted) return (void)MPI_Recv(p, static_cast<int>(b), MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&next, MPI_STATUS_IGNORE);
    if (!last) post();
  }
  void send_block(const char* p, u64 b) { MPI_Send(p, static_cast<int>(b), MPI_BYTE, peer, tag, MPI_COMM_WORLD); }
  char recv_byte(bool last) {
    if (!posted) {
      char c = 0;
      MPI_Recv(&c, 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return c;
    }
    MPI_Wait(&next, MPI_STATUS_IGNORE);
    const char c = byte;
    if (!last) post();
    return c;
  }
  void send_byte(char c) { MPI_Send(&c, 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD); }
};

class mpi_link {
 public:
  explicit mpi_link(bool posted) : io_{1, posted} {}
  void begin(u64 o, u64 bytes, u64 count) { io_.send_header(o, bytes, count); }
  void out(const char* p, u64 bytes, u64) {
    if (!io_.posted) {
      io_.send_block(p, bytes);
      io_.recv_byte(false);
      return;
    }
    char ack = 0;
    MPI_Request r[2];
    MPI_Irecv(&ack, 1, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(p, static_cast<int>(bytes), MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  u64 in(char* p, u64 bytes, u64 s) {
    if (!io_.posted) {
      io_.send_byte('r');
      io_.recv_block(p, bytes, false);
      return s;
    }
    MPI_Request r;
    MPI_Irecv(p, static_cast<int>(bytes), MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
    io_.send_byte('r');
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return s;
  }
  bool other_intact(u64 bytes, u64 s) {
    io_.send_header(op_check, bytes, s);
    char c = 0;
    MPI_Recv(&c, 1, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return c == 'y';
  }
  void stop() { io_.send_header(op_stop, 0, 0); }

 private:
  mpi_io io_;
};

// One transfer way's results (rank 1 of mpi: answers, and returns none).
nlohmann::json transfers(const std::string& way, u64 max_bytes, u64 seed) {
  if (way.rfind("shm", 0) == 0) {
    const bool handshake = way == "shm-transfer-handshake";
    shm_link link(max_bytes, handshake);
    return timed_transfers(link, max_bytes, seed, handshake ? "raw memcpy, flag handshake" : "raw memcpy");
  }
  if (way.rfind("tcp", 0) == 0) {
    const bool polled = way == "tcp-transfer-polled";
    tcp_link link(max_bytes, polled);
    return timed_transfers(link, max_bytes, seed,
                           polled ? "raw TCP socket, polled recv" : "raw TCP socket, blocking recv");
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) throw std::runtime_error("mpi: run it as 2 ranks (mpirun -np 2)");
  const bool posted = way == "mpi-transfer-posted";
  nlohmann::json results = nlohmann::json::array();
  if (rank == 1) {
    mpi_io io{0, posted};
    serve_transfers(io, max_bytes);
  } else {
    mpi_link link(posted);
    results = timed_transfers(link, max_bytes, seed,
                              posted ? "raw MPI_Isend/MPI_Irecv posted ahead" : "raw MPI_Send/MPI_Recv");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"heddle-bench-am-raw: raw round trips or transfers between two processes without heddle"};
  std::string way, json_file;
  u64 n = 20000, max_bytes = u64{64} << 20, seed = 1;
  app.add_option("--way", way, "the transport and the way of using it")
      ->required()
      ->check(CLI::IsMember({"shm-pause-one-line", "shm-spin-one-line", "shm-pause-lines-64-apart",
                             "shm-spin-lines-64-apart", "shm-pause-lines-128-apart", "shm-spin-lines-128-apart",
                             "tcp-blocking", "tcp-polled", "mpi-blocking", "mpi-posted", "shm-transfer",
                             "shm-transfer-handshake", "tcp-transfer", "tcp-transfer-polled", "mpi-transfer-blocking",
                             "mpi-transfer-posted"}));
  app.add_option("--json", json_file, "where the result goes")->required();
  app.add_option("--round-trips", n, "round trips timed")->check(CLI::Range(u64{1}, u64{1'000'000'000}));
  app.add_option("--max-bytes", max_bytes, "the largest transfer")->check(CLI::Range(u64{1024}, u64{1} << 30));
  app.add_option("--seed", seed, "the seed of the transfers' order");
  CLI11_PARSE(app, argc, argv);
  const bool mpi = way.rfind("mpi", 0) == 0, transfer = way.find("transfer") != std::string::npos;
  int rank = 0;
  try {
    if (mpi) {
      MPI_Init(&argc, &argv);  // a single thread: no locks in MPI's calls
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    nlohmann::json result;
    if (transfer) {
      result = {{"results", transfers(way, max_bytes, seed)}};
    } else {
      // The bytes from one flag to the other.
      const std::size_t gap = way.find("one-line") != std::string::npos ? sizeof(u64)
                              : way.find("-64-") != std::string::npos   ? 64
                                                                        : 128;
      result = {{"seconds_per_round_trip", way.rfind("shm-pause", 0) == 0  ? shm_round_trips<true>(n, gap)
                                           : way.rfind("shm-spin", 0) == 0 ? shm_round_trips<false>(n, gap)
                                           : !mpi                          ? tcp_round_trips(n, way == "tcp-polled")
                                                                           : mpi_round_trips(n, way == "mpi-posted")}};
    }
    if (rank == 0) {
      std::ofstream f(json_file);
      if (!(f << result.dump(1) << "\n")) throw std::runtime_error("cannot write " + json_file);
    }
    if (mpi) MPI_Finalize();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-bench-am-raw: %s\n", e.what());
    if (mpi) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
