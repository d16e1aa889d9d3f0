// SPDX-License-Identifier: Apache-2.0
#include "run.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <heddle/am/detail/trace_merge.hpp>

namespace heddle::run_tool {

namespace {

std::string random_hex(std::size_t bytes) {
  std::random_device rd;
  std::string s;
  static const char* digits = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes; ++i) {
    const unsigned v = rd() & 0xff;
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  return s;
}

// A listening TCP socket on addr:0; its port in `port`.
int listen_on(const std::string& addr, int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // inherited by the node: no CLOEXEC
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1)
    throw std::runtime_error("--bind " + addr + ": not an IPv4 address");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0)
    throw std::runtime_error("bind/listen on " + addr + ": " + std::strerror(errno));
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  port = ntohs(sa.sin_port);
  return fd;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended";
}
int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Runs `heddle-trace merge out inputs...` (the one beside this program, else PATH's, else the
// installed one) and waits: its exit status, or -1 if it could not start.
int merge_node_traces(const std::string& out, const std::vector<std::string>& inputs) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string beside;
  if (n > 0) {
    self[n] = '\0';
    beside = std::string(self);
    beside = beside.substr(0, beside.rfind('/') + 1) + "heddle-trace";
  }
  return heddle::am_detail::merge_traces(out, inputs, beside);
}

void remove_leftovers(const std::string& session) {
  const std::string prefix = "heddle." + session + ".";
  DIR* d = ::opendir("/dev/shm");
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
      ::unlink(("/dev/shm/" + std::string(e->d_name)).c_str());
  }
  ::closedir(d);
}

std::string node_trace(const options& o, unsigned k) { return o.trace_file + ".node" + std::to_string(k) + ".json"; }

// What every node of one run shares: its session's name, and on tcp the nodes' listening sockets
// (made here, so that no port can be taken in between), their addresses and the secret.
struct run_setup {
  std::string session;
  std::vector<int> listen_fds;
  std::string peers;
  std::string secret;
};

// Throws std::runtime_error if a socket cannot be made.
run_setup set_up(const options& o) {
  run_setup s;
  s.session = "r" + std::to_string(::getpid()) + "-" + random_hex(6);
  s.secret = random_hex(16);
  if (o.backend == "tcp") {
    for (unsigned k = 0; k < o.nodes; ++k) {
      int port = 0;
      s.listen_fds.push_back(listen_on(o.bind, port));
      s.peers += (k ? "," : "") + o.bind + ":" + std::to_string(port);
    }
  }
  return s;
}

// In the child: becomes node k (its environment, its socket), never returns.
[[noreturn]] void become_node(const options& o, const run_setup& s, unsigned k, const sigset_t& mask) {
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::setenv("HEDDLE_BACKEND", o.backend.c_str(), 1);
  ::setenv("HEDDLE_NODE", std::to_string(k).c_str(), 1);
  ::setenv("HEDDLE_NODES", std::to_string(o.nodes).c_str(), 1);
  ::setenv("HEDDLE_SESSION", s.session.c_str(), 1);
  if (!o.trace_file.empty()) ::setenv("HEDDLE_TRACE", node_trace(o, k).c_str(), 1);
  if (o.backend == "tcp") {
    for (unsigned j = 0; j < o.nodes; ++j)
      if (j != k) ::close(s.listen_fds[j]);
    ::setenv("HEDDLE_PEERS", s.peers.c_str(), 1);
    ::setenv("HEDDLE_LISTEN_FD", std::to_string(s.listen_fds[k]).c_str(), 1);
    ::setenv("HEDDLE_SECRET", s.secret.c_str(), 1);
  }
  std::vector<std::string> command = o.command;
  std::vector<char*> args;
  for (std::string& a : command) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "heddle-run: cannot run %s: %s\n", args[0], std::strerror(errno));
  ::_exit(127);
}

// The nodes' processes; empty if one could not be forked (those started are killed).
std::vector<pid_t> start_nodes(const options& o, const run_setup& s, const sigset_t& child_mask) {
  std::vector<pid_t> pids(o.nodes, -1);
  for (unsigned k = 0; k < o.nodes; ++k) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "heddle-run: fork: %s\n", std::strerror(errno));
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGKILL);
      return {};
    }
    if (pid == 0) become_node(o, s, k, child_mask);
    pids[k] = pid;
  }
  return pids;
}

struct ended {
  std::vector<int> status;  // each node's wait status
  bool timed_out = false;
};

// Waits for every node; passes SIGINT and SIGTERM (blocked: `watched`) on; kills them all at the
// timeout. heddle-run sleeps until a node ends, a signal comes or the timeout is due: a launcher
// that woke every few milliseconds to look would take a core's time from the nodes it runs, on a
// machine whose cores they keep busy polling.
ended wait_for(const options& o, std::vector<pid_t> pids, const sigset_t& watched) {
  const auto start = std::chrono::steady_clock::now();
  ended e;
  e.status.assign(o.nodes, 0);
  unsigned running = o.nodes;
  while (running > 0) {
    int st = 0;
    const pid_t pid = ::waitpid(-1, &st, WNOHANG);
    if (pid > 0) {
      for (unsigned k = 0; k < o.nodes; ++k)
        if (pids[k] == pid) {
          e.status[k] = st;
          pids[k] = -1;
          --running;
        }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;  // no child left to wait for
    timespec wait_for{1, 0};               // a look at the children every second besides SIGCHLD: no end is missed
    if (o.timeout > 0 && !e.timed_out) {
      const double left = o.timeout - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        std::fprintf(stderr, "heddle-run: timeout after %g s: killing the nodes\n", o.timeout);
        e.timed_out = true;
        for (pid_t p : pids)
          if (p > 0) ::kill(p, SIGKILL);
        continue;
      }
      if (left < 1) wait_for = {0, std::min(999'999'999L, static_cast<long>(left * 1e9) + 1)};
    }
    const int sig = ::sigtimedwait(&watched, nullptr, &wait_for);
    if (sig == SIGINT || sig == SIGTERM)
      for (pid_t p : pids)
        if (p > 0) ::kill(p, sig);
  }
  return e;
}

// Node 0's status if it failed, else the first failed node's; 124 after the timeout. A line on
// stderr per failed node.
int run_status(const ended& e) {
  int code = 0;
  for (unsigned k = 0; k < e.status.size(); ++k) {
    if (e.status[k] == 0) continue;
    std::fprintf(stderr, "heddle-run: node %u %s\n", k, describe_status(e.status[k]).c_str());
    if (code == 0) code = exit_code(e.status[k]);
  }
  if (e.status[0] != 0) code = exit_code(e.status[0]);
  if (e.timed_out) code = 124;
  return code;
}

// Merges the nodes' traces into o.trace_file and removes them; if that fails they stay, and a
// run that succeeded gets status 1.
int merge_traces_of(const options& o, int code) {
  std::vector<std::string> parts;
  for (unsigned k = 0; k < o.nodes; ++k) {
    const std::string part = node_trace(o, k);
    if (::access(part.c_str(), R_OK) == 0) parts.push_back(part);
    else std::fprintf(stderr, "heddle-run: --trace: node %u wrote no trace (%s)\n", k, part.c_str());
  }
  if (!parts.empty() && merge_node_traces(o.trace_file, parts) == 0) {
    for (const std::string& part : parts) ::unlink(part.c_str());
    return code;
  }
  std::fprintf(stderr,
               "heddle-run: --trace: the nodes' traces are left in %s.node*.json (heddle-trace merge OUT FILES...)\n",
               o.trace_file.c_str());
  return code == 0 ? 1 : code;
}

}  // namespace

int run(const options& o) {
  run_setup s;
  try {
    s = set_up(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle-run: %s\n", e.what());
    return 2;
  }
  // Blocked here, waited for with sigtimedwait (wait_for); the nodes get the mask as it was.
  sigset_t watched, before;
  ::sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM}) ::sigaddset(&watched, sig);
  ::sigprocmask(SIG_BLOCK, &watched, &before);
  std::vector<pid_t> pids = start_nodes(o, s, before);
  if (pids.empty()) return 1;
  for (int fd : s.listen_fds) ::close(fd);
  const ended e = wait_for(o, std::move(pids), watched);
  remove_leftovers(s.session);
  const int code = run_status(e);
  return o.trace_file.empty() ? code : merge_traces_of(o, code);
}

}  // namespace heddle::run_tool
