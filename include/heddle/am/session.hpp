// SPDX-License-Identifier: Apache-2.0
// A session joins this process to the nodes of one program run. heddle-run (shm, tcp) or mpirun
// (mpi) start the processes; each constructs one session, and then
//
//   int main(int argc, char** argv) {
//     heddle::offload::session s(argc, argv);
//     if (heddle::offload::this_node() != 0) return s.serve();   // serve until node 0's session ends
//     ... node 0's program: offload::async / sync / ping, buffers ...
//   }
//
// The backend and this node's place come from, in order: session_options given explicitly; the
// command line's --heddle-* options (removed from argv); the environment heddle-run sets
// (HEDDLE_BACKEND, HEDDLE_NODE, HEDDLE_NODES, ...); mpirun's environment (the mpi backend); else a
// single node on the loopback backend, so a program runs alone with no launcher.
//
// At start-up every pair of nodes exchanges a hello carrying the hash of their handler registries;
// a peer built from different sources is refused (registry_mismatch, naming it). The destructor
// says goodbye to every peer and waits (at most shutdown_timeout) for theirs, so that nothing sent
// is lost; a peer that died does not hold it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heddle/am/errors.hpp"
#include "heddle/am/offload.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle::offload {

enum class backend {
  loopback,  // every node in this process (tests; one node when run alone)
  shm,       // processes on one host, through shared-memory rings
  tcp,       // processes that reach each other over TCP (heddle-run forks them on its own host)
  mpi,       // the ranks of MPI_COMM_WORLD (mpirun), on a communicator of heddle's own
};
// The backend's name. Thread-safe.
HEDDLE_EXPORT const char* to_string(backend b) noexcept;
// "loopback", "shm", "tcp" or "mpi"; session_error otherwise. Thread-safe.
HEDDLE_EXPORT backend backend_from_string(const std::string& name);

struct session_options {
  backend transport = backend::loopback;
  node_id node = 0;
  node_id nodes = 1;
  // Where handlers run; nullptr means heddle::default_runtime().
  runtime* rt = nullptr;
  // How long the thread that receives messages keeps polling after the last one before it sleeps
  // (a sender then wakes it, through the kernel).
  std::chrono::nanoseconds receiver_spin = std::chrono::microseconds(50);
  // How long a thread waiting in sync() polls before it sleeps.
  std::chrono::nanoseconds caller_spin = std::chrono::microseconds(200);
  // How long start-up waits for every peer, and the destructor for their goodbyes.
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(20);
  std::chrono::milliseconds shutdown_timeout = std::chrono::seconds(10);

  // shm: the name every node of the run shares (heddle-run makes one); segments are
  // /dev/shm/heddle.<session_name>.*
  std::string session_name;
  // shm: bytes of each ring (one per ordered pair of nodes), a power of two of at least 4096; a
  // message larger than a quarter of it travels through a segment of its own.
  std::size_t ring_bytes = std::size_t{1} << 20;

  // tcp: every node's address ("host:port"), this one's included; a node listens on its own (or
  // on listen_fd, an already listening socket heddle-run passes) and connects to those below it.
  std::vector<std::string> peers;
  int listen_fd = -1;
  // tcp: the secret a connecting peer presents (heddle-run makes one; HEDDLE_SECRET otherwise).
  std::string secret;
  // tcp: the largest message accepted from a peer.
  std::uint64_t max_message_bytes = std::uint64_t{1} << 32;
};

class HEDDLE_EXPORT session {
 public:
  // Reads the options from the command line and the environment (above); argc/argv lose the
  // --heddle-* options. Throws session_error (what and where) on a bad setting, peer_lost or
  // registry_mismatch when a peer cannot be joined. One session at a time per process: a second
  // throws session_error. Thread-safe (that check is atomic); blocks until the peers are joined
  // (at most connect_timeout). The argc/argv form edits argv: not while another thread reads it.
  session(int& argc, char**& argv);
  explicit session(const session_options& options);
  // Says goodbye and waits for the peers' goodbyes (bounded); calls still waiting fail with
  // session_error. Not thread-safe: the owner's call; blocks up to shutdown_timeout for the
  // handlers still running and the peers' goodbyes, so not from a handler.
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // Serves calls until node 0's session ends (or node 0 is lost); returns the exit status for
  // main: 0, or 1 when node 0 was lost. On node 0 it returns 0 at once. Thread-safe; blocks
  // (sleeps) until then.
  int serve();

  // The options the session runs with. Thread-safe.
  const session_options& options() const noexcept { return options_; }

 private:
  session_options options_;
};

// HAM's main wrapper: joins the session, serves on every node but 0, and runs
// `node0_main(argc, argv)` (the --heddle-* options removed) on node 0; returns the exit status.
// A session that cannot start is one line on stderr and status 2; an exception out of node0_main
// is one line and status 1. For main's thread: it constructs the process's session (above).
//   int main(int argc, char** argv) {
//     return heddle::offload::run(argc, argv, [](int argc, char** argv) { ...; return 0; });
//   }
template <class F>
int run(int argc, char** argv, F&& node0_main) {
  const char* program = argc > 0 && argv[0] ? argv[0] : "heddle";
  std::optional<session> s;
  try {
    s.emplace(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
  if (this_node() != 0) return s->serve();
  try {
    return std::forward<F>(node0_main)(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

// The options session(argc, argv) would use: the --heddle-* options of argv (removed), the
// environment, or the defaults, as described above. Edits argv: not while another thread reads it.
HEDDLE_EXPORT session_options options_from(int& argc, char**& argv);

}  // namespace heddle::offload

// The am layer's internals (heddle::am_detail) name these unqualified.
namespace heddle::am_detail {
using offload::backend;
using offload::session_options;
}  // namespace heddle::am_detail
