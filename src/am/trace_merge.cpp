// SPDX-License-Identifier: Apache-2.0
// merge_traces (heddle/am/detail/trace_merge.hpp): heddle-trace merge as a child process.
#include "heddle/am/detail/trace_merge.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace heddle::am_detail {

int merge_traces(const std::string& out, const std::vector<std::string>& inputs,
                 const std::string& preferred) noexcept {
  try {
    std::vector<std::string> args{"heddle-trace", "merge", out};
    args.insert(args.end(), inputs.begin(), inputs.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t to_stderr;
    ::posix_spawn_file_actions_init(&to_stderr);
    ::posix_spawn_file_actions_adddup2(&to_stderr, STDERR_FILENO, STDOUT_FILENO);
    pid_t pid = -1;
    int started = -1;
    if (!preferred.empty() && ::access(preferred.c_str(), X_OK) == 0)
      started = ::posix_spawn(&pid, preferred.c_str(), &to_stderr, nullptr, argv.data(), environ);
    if (started != 0) started = ::posix_spawnp(&pid, "heddle-trace", &to_stderr, nullptr, argv.data(), environ);
    if (started != 0) {
      const std::string installed = HEDDLE_INSTALL_BINDIR "/heddle-trace";
      started = ::posix_spawn(&pid, installed.c_str(), &to_stderr, nullptr, argv.data(), environ);
    }
    ::posix_spawn_file_actions_destroy(&to_stderr);
    if (started != 0) return -1;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  } catch (...) {  // the argument strings could not be allocated
    return -1;
  }
}

}  // namespace heddle::am_detail
