#include "child.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

extern char** environ;

namespace heddle::bench::reco {

namespace {

std::string joined(const std::vector<std::string>& command) {
  std::string s;
  for (const std::string& a : command) s += (s.empty() ? "" : " ") + a;
  return s;
}

struct running {
  pid_t pid = -1;
  int out = -1;
  std::string text;
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
  const int rc = posix_spawn(&r.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("reco: cannot start " + joined(command) + ": " + std::strerror(rc));
  }
  r.out = fds[0];
  return r;
}

}  // namespace

child_result run_children(const std::vector<std::vector<std::string>>& commands) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<running> procs;
  for (const auto& c : commands) procs.push_back(start(c));
  child_result result;
  for (std::size_t i = 0; i < procs.size(); ++i) {
    running& r = procs[i];
    char buf[4096];
    for (ssize_t n; (n = ::read(r.out, buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      r.text.append(buf, std::size_t(n));
    }
    ::close(r.out);
    int status = 0;
    rusage usage{};
    while (wait4(r.pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error("reco: " + joined(commands[i]) + " failed (status " + std::to_string(status) + ")");
    result.peak_rss_bytes += double(usage.ru_maxrss) * 1024;
    // The last line that is a JSON object (FastJet's banner and the output module print before it).
    const std::size_t at = r.text.rfind("\n{");
    const std::string line = at == std::string::npos ? r.text : r.text.substr(at + 1);
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("checksum"))
      throw std::runtime_error("reco: " + joined(commands[i]) + " printed no result: " + line);
    result.checksums.push_back(j["checksum"].get<std::string>());
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace heddle::bench::reco
