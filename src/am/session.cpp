// SPDX-License-Identifier: Apache-2.0
// Opening and closing a session: where the options come from, which backend, the engine of the
// process.
#include "heddle/am/session.hpp"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include "engine.hpp"
#include "transports.hpp"

namespace heddle::am_detail {

std::atomic<engine*> the_engine{nullptr};
namespace {
std::atomic<int> engine_users{0};  // threads inside drive_reply
}  // namespace

void throw_no_session() {
  throw session_error("heddle::offload: no session is open (construct a heddle::offload::session first)");
}
engine& current_engine() {
  engine* e = the_engine.load(std::memory_order_acquire);
  if (!e) [[unlikely]]
    throw_no_session();
  return *e;
}
engine* acquire_engine() noexcept {
  engine_users.fetch_add(1);
  engine* e = the_engine.load();
  if (!e) engine_users.fetch_sub(1);
  return e;
}
void release_engine() noexcept { engine_users.fetch_sub(1); }
}  // namespace heddle::am_detail

namespace heddle::offload {

namespace {

using am_detail::engine_users;
using am_detail::the_engine;

std::uint64_t parse_number(std::string_view text, const std::string& where, std::uint64_t max) {
  std::uint64_t v = 0;
  if (text.empty()) throw session_error("heddle::offload: " + where + " is empty: a number is expected");
  for (char c : text) {
    if (c < '0' || c > '9' || v > (max - (c - '0')) / 10)
      throw session_error("heddle::offload: " + where + "=" + std::string(text) + ": a number from 0 to " +
                          std::to_string(max) + " is expected");
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  while (!s.empty()) {
    const auto k = s.find(sep);
    out.emplace_back(s.substr(0, k));
    if (k == std::string_view::npos) break;
    s.remove_prefix(k + 1);
  }
  return out;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

const char* to_string(backend b) noexcept {
  switch (b) {
    case backend::loopback: return "loopback";
    case backend::shm: return "shm";
    case backend::tcp: return "tcp";
    case backend::mpi: return "mpi";
  }
  return "?";
}

backend backend_from_string(const std::string& name) {
  for (backend b : {backend::loopback, backend::shm, backend::tcp, backend::mpi})
    if (name == to_string(b)) return b;
  throw session_error("heddle::offload: unknown backend '" + name + "': loopback, shm, tcp or mpi");
}

session_options options_from(int& argc, char**& argv) {
  session_options o;
  bool from_launcher = false;
  // The launcher's environment (heddle-run).
  if (const char* b = env("HEDDLE_BACKEND")) {
    from_launcher = true;
    o.transport = backend_from_string(b);
    const char* n = env("HEDDLE_NODE");
    const char* ns = env("HEDDLE_NODES");
    if (!n || !ns)
      throw session_error("heddle::offload: HEDDLE_BACKEND is set but HEDDLE_NODE or HEDDLE_NODES is not (start the "
                          "program with heddle-run)");
    o.nodes = static_cast<node_id>(parse_number(ns, "HEDDLE_NODES", 1 << 16));
    o.node = static_cast<node_id>(parse_number(n, "HEDDLE_NODE", o.nodes ? o.nodes - 1 : 0));
    if (o.nodes == 0) throw session_error("heddle::offload: HEDDLE_NODES=0: a session has at least one node");
    if (const char* s = env("HEDDLE_SESSION")) o.session_name = s;
    if (const char* p = env("HEDDLE_PEERS")) o.peers = split(p, ',');
    if (const char* f = env("HEDDLE_LISTEN_FD"))
      o.listen_fd = static_cast<int>(parse_number(f, "HEDDLE_LISTEN_FD", 1 << 20));
    if (const char* s = env("HEDDLE_SECRET")) o.secret = s;
    if (const char* r = env("HEDDLE_RING_BYTES"))
      o.ring_bytes = parse_number(r, "HEDDLE_RING_BYTES", std::uint64_t{1} << 32);
  } else if (env("OMPI_COMM_WORLD_SIZE") || env("PMI_SIZE")) {
    o.transport = backend::mpi;  // node and nodes come from MPI_Init
  }
  // The command line: --heddle-backend=NAME and --heddle-nodes=N (loopback), removed from argv.
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--heddle-backend=", 0) == 0) {
      if (from_launcher)
        throw session_error("heddle::offload: --heddle-backend on the command line of a program heddle-run started: "
                            "use heddle-run --backend");
      o.transport = backend_from_string(std::string(a.substr(17)));
    } else if (a.rfind("--heddle-nodes=", 0) == 0) {
      if (from_launcher)
        throw session_error(
            "heddle::offload: --heddle-nodes on the command line of a program heddle-run started: use heddle-run -n");
      o.nodes = static_cast<node_id>(parse_number(a.substr(15), "--heddle-nodes", 1 << 16));
      if (o.nodes == 0) throw session_error("heddle::offload: --heddle-nodes=0: a session has at least one node");
    } else if (a.rfind("--heddle-", 0) == 0) {
      throw session_error("heddle::offload: unknown option " + std::string(a) +
                          " (--heddle-backend=NAME, --heddle-nodes=N)");
    } else {
      argv[out++] = argv[i];
    }
  }
  argv[out] = nullptr;
  argc = out;
  if (!from_launcher && o.transport != backend::loopback && o.transport != backend::mpi)
    throw session_error(std::string("heddle::offload: the ") + to_string(o.transport) +
                        " backend needs its nodes started by heddle-run (heddle-run -n N --backend " +
                        to_string(o.transport) + " program ...)");
  return o;
}

session::session(int& argc, char**& argv) : session(options_from(argc, argv)) {}

session::session(const session_options& options) : options_(options) {
  std::unique_ptr<am_detail::transport> t;
  switch (options_.transport) {
    case backend::loopback: t = am_detail::make_loopback_transport(options_); break;
    case backend::shm: t = am_detail::make_shm_transport(options_); break;
    case backend::tcp: t = am_detail::make_tcp_transport(options_); break;
    case backend::mpi: t = am_detail::make_mpi_transport(options_); break;
  }
  if (options_.nodes == 0 || options_.node >= options_.nodes)
    throw session_error("heddle::offload: node " + std::to_string(options_.node) + " of " +
                        std::to_string(options_.nodes) + ": a node is numbered from 0 to nodes - 1");
  auto e = std::make_unique<am_detail::engine>(options_, std::move(t));
  am_detail::engine* expected = nullptr;
  if (!the_engine.compare_exchange_strong(expected, e.get()))
    throw session_error("heddle::offload: a session is already open in this process");
  try {
    e->start();
  } catch (...) {
    the_engine.store(nullptr);
    throw;
  }
  e.release();
}

session::~session() {
  am_detail::engine* e = the_engine.load();
  if (!e) return;
  e->finish();
  the_engine.store(nullptr);
  while (engine_users.load() != 0) std::this_thread::yield();  // a waiter still looking at the engine
  delete e;
}

int session::serve() { return am_detail::current_engine().serve_until_node0_leaves() ? 0 : 1; }

}  // namespace heddle::offload
