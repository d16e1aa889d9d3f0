// heddle-run: starts N processes of one program as the nodes of an active-message session.
//   heddle-run -n N [--backend shm|tcp] [--bind ADDR] [--timeout SECONDS] program [args...]
// Every node gets HEDDLE_BACKEND, HEDDLE_NODE, HEDDLE_NODES and HEDDLE_SESSION; on tcp also
// HEDDLE_PEERS (every node's address), HEDDLE_LISTEN_FD (its listening socket, made here so no
// port can be taken in between) and HEDDLE_SECRET. Node 0 runs the program's main work; the others
// serve until node 0's session ends (heddle::offload::session::serve).
//
// Exit status: 0 when every node exits 0; else node 0's status if it failed, or the first failed
// node's (128 + signal for a signal), with one line on stderr per failed node. 2 for a bad command
// line. SIGINT and SIGTERM are passed on to the nodes; --timeout kills them all (status 124).
// Shared-memory objects a crashed node left (/dev/shm/heddle.SESSION.*) are removed at the end.
//
// --trace FILE: every node records a trace (HEDDLE_TRACE=FILE.node<K>.json), and when they have
// exited heddle-run merges them into FILE with `heddle-trace merge` (beside heddle-run, else in
// PATH, else the installed one; its report on stderr): one process track per node, each message a
// flow from its sender to its receiver. If the merge cannot run, the nodes' files stay and
// heddle-run says so (status 1 if the run succeeded).
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <heddle/am/detail/trace_merge.hpp>

#include "numeric_options.hpp"

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
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) throw std::runtime_error("--bind " + addr + ": not an IPv4 address");
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
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
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
  return heddle::offload::detail::merge_traces(out, inputs, beside);
}

void remove_leftovers(const std::string& session) {
  const std::string prefix = "heddle." + session + ".";
  DIR* d = ::opendir("/dev/shm");
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) ::unlink(("/dev/shm/" + std::string(e->d_name)).c_str());
  }
  ::closedir(d);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"heddle-run: starts N processes of a program as the nodes of a heddle active-message session"};
  unsigned nodes = 0;
  std::string backend = "shm", bind = "127.0.0.1";
  double timeout = 0;
  std::vector<std::string> command;
  app.add_option("-n,--nodes", nodes, "number of nodes (processes)")->required()->check(heddle::tool::whole_number(1, 1024));
  app.add_option("--backend", backend, "shm (one host, shared memory) or tcp")->check(CLI::IsMember({"shm", "tcp"}));
  app.add_option("--bind", bind, "tcp: the IPv4 address the nodes listen on (default 127.0.0.1)");
  app.add_option("--timeout", timeout, "kill every node after this many seconds (0: never)")->check(heddle::tool::real_number(true));
  std::string trace_file;
  app.add_option("--trace", trace_file, "every node records a trace; merged into FILE at the end (heddle-trace merge)");
  app.prefix_command();  // the first argument that is not heddle-run's starts the program's command line
  app.footer("The program and its arguments follow heddle-run's options.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  command = app.remaining();
  if (command.empty()) {
    std::fprintf(stderr, "heddle-run: no program given (heddle-run -n N [--backend shm|tcp] program [args...])\n");
    return 2;
  }

  const std::string session = "r" + std::to_string(::getpid()) + "-" + random_hex(6);
  std::vector<int> listen_fds;
  std::string peers;
  const std::string secret = random_hex(16);
  if (backend == "tcp") {
    try {
      for (unsigned k = 0; k < nodes; ++k) {
        int port = 0;
        listen_fds.push_back(listen_on(bind, port));
        peers += (k ? "," : "") + bind + ":" + std::to_string(port);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heddle-run: %s\n", e.what());
      return 2;
    }
  }

  // heddle-run sleeps until a node ends, a signal comes or the timeout is due (sigtimedwait on the
  // blocked signals): a launcher that woke every few milliseconds to look would take a core's time
  // from the nodes it runs, on a machine whose cores they keep busy polling. The nodes get the
  // signal mask back.
  sigset_t watched, before;
  ::sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM}) ::sigaddset(&watched, sig);
  ::sigprocmask(SIG_BLOCK, &watched, &before);

  std::vector<pid_t> pids(nodes, -1);
  for (unsigned k = 0; k < nodes; ++k) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "heddle-run: fork: %s\n", std::strerror(errno));
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      ::sigprocmask(SIG_SETMASK, &before, nullptr);
      ::setenv("HEDDLE_BACKEND", backend.c_str(), 1);
      ::setenv("HEDDLE_NODE", std::to_string(k).c_str(), 1);
      ::setenv("HEDDLE_NODES", std::to_string(nodes).c_str(), 1);
      ::setenv("HEDDLE_SESSION", session.c_str(), 1);
      if (!trace_file.empty()) ::setenv("HEDDLE_TRACE", (trace_file + ".node" + std::to_string(k) + ".json").c_str(), 1);
      if (backend == "tcp") {
        for (unsigned j = 0; j < nodes; ++j)
          if (j != k) ::close(listen_fds[j]);
        ::setenv("HEDDLE_PEERS", peers.c_str(), 1);
        ::setenv("HEDDLE_LISTEN_FD", std::to_string(listen_fds[k]).c_str(), 1);
        ::setenv("HEDDLE_SECRET", secret.c_str(), 1);
      }
      std::vector<char*> args;
      for (std::string& a : command) args.push_back(a.data());
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "heddle-run: cannot run %s: %s\n", args[0], std::strerror(errno));
      ::_exit(127);
    }
    pids[k] = pid;
  }
  for (int fd : listen_fds) ::close(fd);

  // Wait for every node; pass signals on; enforce the timeout.
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> status(nodes, 0);
  unsigned running = nodes;
  bool timed_out = false;
  while (running > 0) {
    int st = 0;
    const pid_t pid = ::waitpid(-1, &st, WNOHANG);
    if (pid > 0) {
      for (unsigned k = 0; k < nodes; ++k)
        if (pids[k] == pid) {
          status[k] = st;
          pids[k] = -1;
          --running;
        }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;  // no child left to wait for
    timespec wait_for{1, 0};  // a look at the children every second besides SIGCHLD: no end is missed
    if (timeout > 0 && !timed_out) {
      const double left = timeout - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        std::fprintf(stderr, "heddle-run: timeout after %g s: killing the nodes\n", timeout);
        timed_out = true;
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
  remove_leftovers(session);

  int code = 0;
  for (unsigned k = 0; k < nodes; ++k) {
    if (status[k] == 0) continue;
    std::fprintf(stderr, "heddle-run: node %u %s\n", k, describe_status(status[k]).c_str());
    if (code == 0) code = exit_code(status[k]);
  }
  if (status[0] != 0) code = exit_code(status[0]);
  if (timed_out) code = 124;
  if (!trace_file.empty()) {
    std::vector<std::string> parts;
    for (unsigned k = 0; k < nodes; ++k) {
      const std::string part = trace_file + ".node" + std::to_string(k) + ".json";
      if (::access(part.c_str(), R_OK) == 0) parts.push_back(part);
      else std::fprintf(stderr, "heddle-run: --trace: node %u wrote no trace (%s)\n", k, part.c_str());
    }
    if (!parts.empty() && merge_node_traces(trace_file, parts) == 0) {
      for (const std::string& part : parts) ::unlink(part.c_str());
    } else {
      std::fprintf(stderr, "heddle-run: --trace: the nodes' traces are left in %s.node*.json (heddle-trace merge OUT FILES...)\n",
                   trace_file.c_str());
      if (code == 0) code = 1;
    }
  }
  return code;
}
