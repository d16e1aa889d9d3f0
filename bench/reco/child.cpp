// SPDX-License-Identifier: Apache-2.0
#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

extern char** environ;

namespace heddle::bench::reco {

namespace {

using clock_type = std::chrono::steady_clock;

// How often a process's smaps_rollup is read again (child.hpp: why not at every sample).
constexpr std::chrono::milliseconds rollup_every{200};

std::string joined(const std::vector<std::string>& command) {
  std::string s;
  for (const std::string& a : command) s += (s.empty() ? "" : " ") + a;
  return s;
}

double seconds(clock_type::duration d) { return std::chrono::duration<double>(d).count(); }

struct running {
  pid_t pid = -1;
  int out = -1;    // its stdout, until end of file
  int pidfd = -1;  // readable once it has exited; -1 where pidfd_open is not there (then waitpid polls)
  std::string text;
  bool exited = false;
  int status = 0;
  clock_type::time_point started, ended;
  bool rollup_read = false;
  clock_type::time_point rollup_at;
  double pss_rest_bytes = 0;  // "Pss:" less "Pss_Anon:" at the last smaps_rollup read
  double peak_pss_bytes = 0;
  double peak_rss_bytes = 0;
};

running start(const std::vector<std::string>& command) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("reco: pipe2: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  running r;
  r.started = clock_type::now();
  const int rc = posix_spawn(&r.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("reco: cannot start " + joined(command) + ": " + std::strerror(rc));
  }
  r.out = fds[0];
  r.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, r.pid, 0));
  return r;
}

// A /proc file's text; empty when it cannot be read (the process has gone).
std::string read_proc(pid_t pid, const char* file) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    s.append(buf, std::size_t(n));
  }
  ::close(fd);
  return s;
}

// The process's resident and anonymous memory in bytes (statm: resident pages, and those less the
// shared ones); {0, 0} when it has none left (it has exited) or has gone.
std::pair<double, double> resident_and_anon_bytes(pid_t pid) {
  static const double page = double(::sysconf(_SC_PAGESIZE));
  unsigned long long size = 0, resident = 0, shared = 0;
  if (std::sscanf(read_proc(pid, "statm").c_str(), "%llu %llu %llu", &size, &resident, &shared) != 3 ||
      resident < shared)
    return {0, 0};
  return {double(resident) * page, double(resident - shared) * page};
}

// The value of smaps_rollup's line `name` ("\nPss:") in bytes; -1 when there is none.
double rollup_field(const std::string& rollup, const char* name) {
  const std::size_t at = rollup.find(name);
  return at == std::string::npos ? -1 : std::strtod(rollup.c_str() + at + std::strlen(name), nullptr) * 1024;
}

// Reads the processes' memory once; returns {the processes' PSS summed, their anonymous memory summed}.
std::pair<double, double> sample(std::vector<running>& procs) {
  double pss = 0, anon = 0;
  const auto now = clock_type::now();
  for (running& r : procs) {
    if (r.exited) continue;
    const auto [rss, a] = resident_and_anon_bytes(r.pid);
    if (a == 0) continue;  // exiting: its memory is gone, whatever smaps_rollup said last
    if (!r.rollup_read || now - r.rollup_at >= rollup_every) {
      const std::string rollup = read_proc(r.pid, "smaps_rollup");
      const double total = rollup_field(rollup, "\nPss:"), anon_part = rollup_field(rollup, "\nPss_Anon:");
      if (total >= 0 && anon_part >= 0) {
        r.pss_rest_bytes = total - anon_part;
        r.rollup_read = true;
        r.rollup_at = now;
      }
    }
    r.peak_pss_bytes = std::max(r.peak_pss_bytes, a + r.pss_rest_bytes);
    r.peak_rss_bytes = std::max(r.peak_rss_bytes, rss);
    pss += a + r.pss_rest_bytes;
    anon += a;
  }
  return {pss, anon};
}

// Reaps `r` if it has exited (without waiting); true when it has.
bool reap(running& r) {
  if (r.exited) return true;
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(r.pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (got != r.pid) return false;
  r.ended = clock_type::now();
  r.exited = true;
  r.status = status;
  if (r.pidfd >= 0) ::close(r.pidfd);
  r.pidfd = -1;
  return true;
}

// Reads what `fd` has (one read; poll said it would not block); closes it at end of file.
void drain_once(running& r) {
  char buf[4096];
  const ssize_t n = ::read(r.out, buf, sizeof buf);
  if (n > 0) r.text.append(buf, std::size_t(n));
  else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    ::close(r.out);
    r.out = -1;
  }
}

// Kills and reaps the processes still running (an error ends the measurement).
void abandon(std::vector<running>& procs) {
  for (running& r : procs) {
    if (r.out >= 0) ::close(r.out);
    if (r.pidfd >= 0) ::close(r.pidfd);
    if (r.exited) continue;
    ::kill(r.pid, SIGKILL);
    int status = 0;
    while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

}  // namespace

child_result run_children(const std::vector<std::vector<std::string>>& commands,
                          std::chrono::milliseconds sample_every) {
  const auto t0 = clock_type::now();
  std::vector<running> procs;
  child_result result;
  try {
    for (const auto& c : commands) procs.push_back(start(c));
    auto next_sample = clock_type::now();
    for (;;) {
      // Reap before sampling, so that a process that has gone counts 0, not its last figures.
      bool all_gone = true;
      for (running& r : procs) all_gone &= reap(r);  // every one, not up to the first still running
      if (all_gone) break;
      const auto now = clock_type::now();
      if (now >= next_sample) {
        const auto [pss, anon] = sample(procs);
        result.peak_pss_bytes = std::max(result.peak_pss_bytes, pss);
        result.peak_anon_bytes = std::max(result.peak_anon_bytes, anon);
        ++result.samples;
        next_sample = std::max(next_sample + sample_every, now);
      }
      // Wait for output, an exit (the pidfd) or the next sample, whichever comes first.
      std::vector<pollfd> fds;
      std::vector<running*> owner;
      bool without_pidfd = false;
      for (running& r : procs) {
        if (r.out >= 0) fds.push_back({r.out, POLLIN, 0}), owner.push_back(&r);
        if (r.pidfd >= 0) fds.push_back({r.pidfd, POLLIN, 0}), owner.push_back(nullptr);
        without_pidfd |= !r.exited && r.pidfd < 0;
      }
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_sample - clock_type::now()).count();
      if (without_pidfd) wait = std::min<decltype(wait)>(wait, 1);  // exits seen within 1 ms
      if (::poll(fds.data(), fds.size(), int(std::max<decltype(wait)>(wait, 0))) < 0 && errno != EINTR)
        throw std::runtime_error("reco: poll: " + std::string(std::strerror(errno)));
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (owner[i] && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) drain_once(*owner[i]);
    }
    // The rest of their output (they have exited: their pipes end).
    for (running& r : procs)
      while (r.out >= 0) drain_once(r);
  } catch (...) {
    abandon(procs);
    throw;
  }

  clock_type::time_point last = t0;
  for (std::size_t i = 0; i < procs.size(); ++i) {
    const running& r = procs[i];
    last = std::max(last, r.ended);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
      throw std::runtime_error("reco: " + joined(commands[i]) + " failed (status " + std::to_string(r.status) + ")");
    // The last line that is a JSON object (FastJet's banner and the output module print before it).
    const std::size_t at = r.text.rfind("\n{");
    const std::string line = at == std::string::npos ? r.text : r.text.substr(at + 1);
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("checksum") || !j.contains("events_checksum") || !j.contains("loop_s") ||
        !j.contains("vm_hwm_bytes"))
      throw std::runtime_error("reco: " + joined(commands[i]) + " printed no result: " + line);
    process_result p;
    p.checksum = j["checksum"].get<std::string>();
    p.events_checksum = std::stoull(j["events_checksum"].get<std::string>(), nullptr, 16);  // "0x..." (or "0")
    p.events = j["events"].get<std::uint64_t>();
    p.loop_s = j["loop_s"].get<double>();
    p.vm_hwm_bytes = j["vm_hwm_bytes"].get<double>();
    p.wall_s = seconds(r.ended - r.started);
    p.peak_pss_bytes = r.peak_pss_bytes;
    p.sampled_peak_rss_bytes = r.peak_rss_bytes;
    result.processes.push_back(std::move(p));
  }
  result.wall_s = seconds(last - t0);
  return result;
}

}  // namespace heddle::bench::reco
